/**
 * Upstream puts small bits of HTML into some strings (recommendation links, tf.data bottleneck
 * text). We never render them as HTML: these functions turn them into plain text and a list of
 * text/link segments that the views bind as text, with only http(s) links kept.
 *
 *   segments('See <a href="https://x.org/a">this</a>.')
 *     → [{text: 'See '}, {text: 'this', href: 'https://x.org/a'}, {text: '.'}]
 */

/**
 * Converter phrases that point at things this page does not have (numbered sections), and our
 * words for them. The payload keeps upstream's text; only the page says it differently.
 */
const REWORDED: [RegExp, string][] = [
  [/Look at Section 3 for the breakdown of input time on the host\./, 'The host-side analysis below breaks the input time down.'],
  [/\(please ignore Section 3 below\)/, '(so the host-side analysis below does not apply)'],
  [/\(especially Section 3 for the breakdown of input operations on the Host\)/, '(its host-side analysis breaks down the input operations)'],
];

/** Link texts that say nothing ("this", "here"), named by where they lead. */
const LINK_NAMES: [RegExp, string][] = [
  [/tensorflow\.org\/guide\/data_performance_analysis/, 'the tf.data performance analysis guide'],
  [/tensorflow\.org\/guide\/data_performance/, 'the tf.data performance guide'],
  [/tensorflow\.org\/guide\/data\b/, 'the tf.data guide'],
];

export function reword(text: string): string {
  return REWORDED.reduce((out, [pattern, words]) => out.replace(pattern, words), text);
}

function linkText(text: string, href: string): string {
  if (!/^(this|here)$/i.test(text.trim())) return text;
  return LINK_NAMES.find(([pattern]) => pattern.test(href))?.[1] ?? text;
}

export interface Segment {
  text: string;
  href?: string;
}

const ANCHOR = /<a\s[^>]*?href\s*=\s*(["'])(.*?)\1[^>]*>(.*?)<\/a\s*>/gis;

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', '#39': "'" };

function decodeEntities(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|apos|nbsp|#39);/g, (_, name: string) => ENTITIES[name]);
}

function stripTags(fragment: string): string {
  return decodeEntities(
    fragment
      .replace(/<br\s*\/?>/gi, '\n')
      .replace(/<\/(div|p|li)>/gi, '\n')
      .replace(/<[^>]*>/g, ''),
  ).replace(/\n{2,}/g, '\n');
}

/** Text of a fragment: `<br>` becomes a line break, other tags are dropped, entities decoded. */
export function plainText(fragment: string): string {
  return stripTags(fragment).trim();
}

/** True when the text looks like it carries markup. */
export function hasMarkup(text: string): boolean {
  return /<\/?[a-z][^>]*>/i.test(text);
}

export function safeHref(href: string): string | undefined {
  const value = decodeEntities(href.trim());
  return /^https?:\/\//i.test(value) ? value : undefined;
}

/** Text and link segments of a fragment (reworded); links other than http(s) become text. */
export function segments(text: string): Segment[] {
  const fragment = reword(text);
  const out: Segment[] = [];
  let last = 0;
  for (const match of fragment.matchAll(ANCHOR)) {
    const before = fragment.slice(last, match.index);
    if (before) out.push({ text: stripTags(before) });
    const text = plainText(match[3]) || match[2];
    const href = safeHref(match[2]);
    out.push(href ? { text: linkText(text, href), href } : { text });
    last = (match.index ?? 0) + match[0].length;
  }
  const tail = fragment.slice(last);
  if (tail) out.push({ text: stripTags(tail) });
  return out.filter((s) => s.text);
}
