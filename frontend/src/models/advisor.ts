/**
 * The advisor's findings (tools/advisor.py): one DataTable row per finding, most severe first.
 *
 *   const report = parseAdvice(payload);   // {framework, guide, findings: [{severity, ...}]}
 *   countBySeverity(report.findings)       // {critical: 1, warning: 2, info: 3}
 */
import { isDataTable, type DataTable } from '../table/datatable';

export type Severity = 'critical' | 'warning' | 'info';

export interface AdvisorFinding {
  severity: Severity;
  check: string;
  title: string;
  evidence: string;
  advice: string;
  /** The page's URL query that shows the evidence (`?run=..&tool=..`), or ''. */
  link: string;
  linkTool: string;
}

export interface AdvisorReport {
  framework: string;
  guide: string;
  findings: AdvisorFinding[];
}

const SEVERITIES: readonly Severity[] = ['critical', 'warning', 'info'];

export function parseAdvice(payload: unknown): AdvisorReport | null {
  if (!isDataTable(payload) || !payload.cols.some((c) => c.id === 'severity')) return null;
  const table = payload as DataTable;
  const index = new Map(table.cols.map((c, i) => [c.id ?? '', i]));
  const text = (row: DataTable['rows'][number], id: string) => String(row.c[index.get(id) ?? -1]?.v ?? '');
  const findings = table.rows.map((row) => {
    const severity = text(row, 'severity') as Severity;
    const link = safeQuery(text(row, 'link'));
    return {
      severity: SEVERITIES.includes(severity) ? severity : 'info',
      check: text(row, 'check'),
      title: text(row, 'title'),
      evidence: text(row, 'evidence'),
      advice: text(row, 'advice'),
      link,
      linkTool: link ? (new URLSearchParams(link).get('tool') ?? '') : '',
    };
  });
  return { framework: String(table.p?.framework ?? ''), guide: safeUrl(String(table.p?.guide ?? '')), findings };
}

/** Only a query string (`?a=b`) is followed: never another origin or scheme. */
function safeQuery(link: string): string {
  return link.startsWith('?') ? link : '';
}

function safeUrl(url: string): string {
  return /^https:\/\/[^\s"<>]+$/.test(url) ? url : '';
}

export function countBySeverity(findings: readonly AdvisorFinding[]): Record<Severity, number> {
  const counts: Record<Severity, number> = { critical: 0, warning: 0, info: 0 };
  for (const f of findings) counts[f.severity] += 1;
  return counts;
}

/** The link with the current host kept (the advisor does not know which host the page shows). */
export function withHost(link: string, host: string): string {
  if (!link) return '';
  const params = new URLSearchParams(link);
  if (host && !params.has('host')) params.set('host', host);
  return '?' + params.toString();
}

