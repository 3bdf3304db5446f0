import { describe, expect, it } from 'vitest';
import { plainText, segments } from './rich-text';

describe('rich text', () => {
  it('keeps http(s) anchors as links and everything else as text', () => {
    expect(segments('See <a href="https://x.org/a" target="_blank">this</a> now.')).toEqual([
      { text: 'See ' },
      { text: 'this', href: 'https://x.org/a' },
      { text: ' now.' },
    ]);
    expect(segments('<a href="javascript:alert(1)">bad</a>')).toEqual([{ text: 'bad' }]);
  });

  it('turns markup into plain text', () => {
    expect(plainText('<u>Iterator Type</u>: <b>MapAndBatch</b><br/><u>Latency</u>: 1 &amp; 2')).toBe(
      'Iterator Type: MapAndBatch\nLatency: 1 & 2',
    );
    expect(plainText('<img src=x onerror=alert(1)>')).toBe('');
    expect(plainText('a &lt;img&gt; b')).toBe('a <img> b');
  });
});
