/**
 * The advisor: one card per finding (severity, what was seen, the numbers, what to do) with a
 * link to the page or trace window that shows the evidence. Links are page queries only.
 */
import { LitElement, css, html, nothing } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import { dashboardStyles, toolLink } from '../components/dashboard-parts';
import { controlStyles } from '../components/shared-styles';
import { countBySeverity, parseAdvice, withHost, type AdvisorFinding, type AdvisorReport } from '../models/advisor';
import { toolLabel } from '../state';
import type { ToolContext, ToolViewElement } from './contract';

export const ADVISOR_VIEW_TAG = 'pf-advisor-view';

export const findingStyles = css`
  .finding {
    border-left: 4px solid var(--pf-border);
    padding: 8px 12px;
    margin: 8px 0;
    background: var(--pf-surface);
    border-radius: 4px;
  }
  .finding.critical {
    border-left-color: #d93025;
  }
  .finding.warning {
    border-left-color: #f29900;
  }
  .finding.info {
    border-left-color: #1a73e8;
  }
  .finding h3 {
    margin: 0 0 4px;
    font-size: 0.98rem;
  }
  .badge {
    display: inline-block;
    font-size: 0.72rem;
    font-weight: 600;
    text-transform: uppercase;
    padding: 1px 6px;
    border-radius: 8px;
    margin-right: 6px;
    border: 1px solid currentColor;
  }
  .critical .badge {
    color: #d93025;
  }
  .warning .badge {
    color: #b06000;
  }
  .info .badge {
    color: #1a73e8;
  }
  .finding p {
    margin: 4px 0;
  }
`;

/** The run's advisor report for the page's host, or null (not listed for the run, or failed). */
export async function loadAdvice(context: ToolContext | undefined): Promise<AdvisorReport | null> {
  if (!context?.tools?.includes('advisor')) return null;
  try {
    return parseAdvice(await context.api.toolData(context.run, 'advisor', context.host));
  } catch {
    return null; // the page that shows them stands without them
  }
}

/**
 * The advisor's problems (critical and warning findings, the first three) for an overview's
 * recommendation: the same checks as the advisor page, with a link to all of them.
 */
export function adviceProblems(from: Element, context: ToolContext | undefined, report: AdvisorReport | null) {
  const problems = (report?.findings ?? []).filter((f) => f.severity !== 'info');
  if (!problems.length) return nothing;
  return html`<h3>Advisor findings</h3>
    ${problems.slice(0, 3).map((f) => findingCard(f, context?.host ?? ''))}
    ${context ? html`<p>${toolLink(from, context.run, 'advisor', 'All advisor findings')}</p>` : nothing}`;
}

/** One finding as a card (also used by the overviews' recommendations). */
export function findingCard(finding: AdvisorFinding, host: string) {
  const link = withHost(finding.link, host);
  return html`<article class="finding ${finding.severity}" data-check=${finding.check}>
    <h3><span class="badge">${finding.severity}</span>${finding.title}</h3>
    <p>${finding.evidence}</p>
    <p><strong>What to do:</strong> ${finding.advice}</p>
    ${link ? html`<p><a class="tool-link" href=${link}>Open ${toolLabel(finding.linkTool)}</a></p>` : nothing}
  </article>`;
}

@customElement(ADVISOR_VIEW_TAG)
export class AdvisorView extends LitElement implements ToolViewElement {
  @property({ attribute: false }) context!: ToolContext;
  @property({ attribute: false }) data: unknown;
  private report: AdvisorReport | null = null;

  static override styles = [controlStyles, dashboardStyles, findingStyles];

  override willUpdate(changed: Map<PropertyKey, unknown>): void {
    if (changed.has('data')) this.report = parseAdvice(this.data);
  }

  override render() {
    const report = this.report;
    if (!report) return html`<p class="muted">This payload holds no advisor findings.</p>`;
    const counts = countBySeverity(report.findings);
    const { api, run, tool, host } = this.context;
    return html`
      <section class="card wide" aria-label="Advisor">
        <h2>Advisor</h2>
        <p class="muted">
          ${report.framework} profile: ${counts.critical} critical, ${counts.warning} warnings, ${counts.info} notes.
          ${report.guide
            ? html`<a href=${report.guide} target="_blank" rel="noopener noreferrer">${report.framework} profiling guide</a>`
            : nothing}
          · <a class="button export" href=${api.csvUrl(run, tool, host)}>Export as CSV</a>
        </p>
        ${report.findings.length
          ? report.findings.map((f) => findingCard(f, host))
          : html`<p>No problem found by the checks.</p>`}
      </section>
    `;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'pf-advisor-view': AdvisorView;
  }
}
