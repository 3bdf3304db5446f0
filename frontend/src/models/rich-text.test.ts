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

  it('names "this" / "here" links by where they lead and rewords references to numbered sections', () => {
    expect(segments('See <a href="https://www.tensorflow.org/guide/data_performance_analysis" target="_blank">this</a> for suggestions.')).toEqual([
      { text: 'See ' },
      { text: 'the tf.data performance analysis guide', href: 'https://www.tensorflow.org/guide/data_performance_analysis' },
      { text: ' for suggestions.' },
    ]);
    const text = segments('Look at Section 3 for the breakdown of input time on the host.').map((s) => s.text).join('');
    expect(text).not.toMatch(/Section 3/);
    expect(segments('custom input pipeline (please ignore Section 3 below).')[0].text).toBe(
      'custom input pipeline (so the host-side analysis below does not apply).',
    );
  });
});
