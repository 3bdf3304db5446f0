/**
 * Why the pod viewer counts two more steps than the overview (issue 28 item 9): the pod viewer
 * keeps every step, as upstream's does, while the overview, input pipeline and TF stats leave out
 * the first and last step when there are more than `STEPS_KEPT_WHOLE` (the capture window may cut
 * them). Mirrors `MAX_STEPS_KEPT_WHOLE` in `analysis/steps/step_db.py`; see docs/differences.md.
 */
export const STEPS_KEPT_WHOLE = 5;

/** The note next to the pod viewer's step count, or '' when both tools count the same steps. */
export function podStepCountNote(steps: number): string {
  if (steps <= STEPS_KEPT_WHOLE) return '';
  return (
    `All ${steps} steps, the first and last included. The overview, input pipeline and TF stats ` +
    `leave those two out (the capture may have cut them), so they count ${steps - 2}.`
  );
}
