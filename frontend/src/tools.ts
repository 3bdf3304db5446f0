/**
 * Tool names, in one place: a run may list a tool under a legacy name (`tensorflow_stats`) or
 * with upstream's marks (`trace_viewer@`, `…^`); recommendations name tools by their plain name.
 *
 *   canonicalTool('tensorflow_stats^') → 'framework_op_stats'
 *   runToolFor('trace_viewer', ['overview_page', 'trace_viewer@']) → 'trace_viewer@'
 */

/** Each tool, and the names a run may list it under, preferred first. */
const TOOL_NAMES: Record<string, readonly string[]> = {
  trace_viewer: ['trace_viewer@', 'trace_viewer', 'trace_viewer@^'],
  framework_op_stats: ['framework_op_stats', 'tensorflow_stats'],
};

const CANONICAL = new Map<string, string>(
  Object.entries(TOOL_NAMES).flatMap(([tool, names]) => names.map((name) => [name.replace(/[@^]+$/, ''), tool] as [string, string])),
);

/** The tool a listed name stands for (marks dropped, legacy names mapped). */
export function canonicalTool(name: string): string {
  const plain = name.replace(/[@^]+$/, '');
  return CANONICAL.get(plain) ?? plain;
}

/** Does the listed `name` stand for one of `tools` (plain names)? */
export function isTool(name: string, ...tools: string[]): boolean {
  return tools.includes(canonicalTool(name));
}

/** The name under which the run lists `tool` (its preferred name first), if it does. */
export function runToolFor(tool: string, runTools: readonly string[]): string | undefined {
  const canonical = canonicalTool(tool);
  const preferred = TOOL_NAMES[canonical] ?? [canonical];
  return preferred.find((name) => runTools.includes(name)) ?? runTools.find((name) => canonicalTool(name) === canonical);
}
