/** Escaping and highlight conversion for Slack, HTML and the terminal. */
import { describe, expect, it } from 'vitest';
import {
  escapeHtml,
  escapeSlack,
  highlightToHtml,
  highlightToPlain,
  highlightToSlack,
  htmlText,
  lineText,
  parseHighlight,
  slackLines,
  slackPlain,
  slackText,
  stripControl,
} from '../../lib/render/escape.ts';

describe('escapeSlack', () => {
  it('replaces only &, < and >', () => {
    expect(escapeSlack(`<!channel> & <@U123> "q" 'a' *b* _i_`)).toBe(
      `&lt;!channel&gt; &amp; &lt;@U123&gt; "q" 'a' *b* _i_`,
    );
  });

  it('keeps an already-escaped entity visible as text', () => {
    expect(escapeSlack('&amp;')).toBe('&amp;amp;');
  });
});

describe('escapeHtml', () => {
  it('escapes the five HTML-special characters', () => {
    expect(escapeHtml(`<script>alert("x")</script> & 'y'`)).toBe(
      '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;',
    );
  });
});

describe('parseHighlight', () => {
  it('splits marked and unmarked text, in any case, and survives unbalanced tags', () => {
    expect(parseHighlight('a <mark>b</mark> c <MARK>d')).toEqual([
      { text: 'a ', marked: false },
      { text: 'b', marked: true },
      { text: ' c ', marked: false },
      { text: 'd', marked: true },
    ]);
    expect(parseHighlight('x</mark>y')).toEqual([{ text: 'xy', marked: false }]);
  });

  it('treats every other tag as text', () => {
    expect(parseHighlight('<b>x</b>')).toEqual([{ text: '<b>x</b>', marked: false }]);
  });
});

describe('highlightToSlack', () => {
  it('shows <mark> as bold after escaping everything else', () => {
    expect(highlightToSlack('hi <!channel> <mark>acme.test</mark> <@U1>')).toBe(
      'hi &lt;!channel&gt; *acme.test* &lt;@U1&gt;',
    );
  });

  it('a ping or a forged link inside a highlight is escaped and bold', () => {
    expect(highlightToSlack('<mark><https://evil.example|click></mark>')).toBe(
      '*&lt;https://evil.example|click&gt;*',
    );
  });

  it('neutralises * and backticks inside a highlight so bold cannot be closed early', () => {
    const out = highlightToSlack('<mark>a*b`c`</mark>');
    expect(out).toBe('*a∗bˋcˋ*');
    expect(out.match(/\*/g)).toHaveLength(2);
  });

  it('leaves _ and ~ in highlights and * outside them untouched', () => {
    expect(highlightToSlack('x*y <mark>john_doe~1</mark>')).toBe('x*y *john_doe~1*');
  });

  it('moves edge whitespace outside the bold and drops empty highlights', () => {
    expect(highlightToSlack('a<mark> b </mark>c<mark></mark>')).toBe('a *b* c');
    expect(highlightToSlack('<mark>   </mark>')).toBe('   ');
  });

  it('a highlight spanning lines stays one bold run', () => {
    expect(highlightToSlack('<mark>a\nb</mark>')).toBe('*a b*');
  });

  it('clips between characters, never inside an entity, and says how much was left out', () => {
    const text = `${'&'.repeat(40)}<mark>${'y'.repeat(10_000)}</mark>`;
    const out = highlightToSlack(text, 300);
    expect(out.length).toBeLessThanOrEqual(300);
    expect(out).toMatch(/^(&amp;)+\*y+\*… \(truncated, [\d,]+ more characters\)$/);
    const shownChars = (out.match(/&amp;/g) ?? []).length + (out.match(/y/g) ?? []).length;
    const more = Number(/truncated, ([\d,]+) more/.exec(out)![1]!.replaceAll(',', ''));
    expect(shownChars + more, 'shown + left out = whole text').toBe(10_040);
  });

  it('does not clip text that fits', () => {
    expect(highlightToSlack('<mark>ok</mark>', 4)).toBe('*ok*');
  });
});

describe('highlightToHtml', () => {
  it('keeps <mark> as a fresh tag and escapes everything else, including attributes smuggled in', () => {
    expect(highlightToHtml('<img src=x onerror=alert(1)> <mark>a&b</mark> <mark onclick="x">c</mark>')).toBe(
      '&lt;img src=x onerror=alert(1)&gt; <mark>a&amp;b</mark> &lt;mark onclick=&quot;x&quot;&gt;c',
    );
  });
});

describe('terminal text', () => {
  it('strips escape sequences, controls and bidi overrides, and turns line breaks into spaces', () => {
    expect(stripControl('a\x1b[31mred\x1b]0;title\x07\nb\u202Eevil\u0000')).toBe('a[31mred]0;title bevil');
  });

  it('with lines, keeps LF and tab, makes CRLF and the rarer breaks LF, and strips the rest', () => {
    expect(stripControl('a\r\nb\u2028c\td\u001b[2J\u202Ee\u200d', { lines: true })).toBe(
      'a\nb\nc\td[2Je\u200d',
    );
  });

  it('highlightToPlain marks with the given codes and strips controls in the text', () => {
    expect(highlightToPlain('x\x1b[2J <mark>y</mark>', undefined, { open: '[', close: ']' })).toBe(
      'x[2J [y]',
    );
  });

  it('lineText clips with a note', () => {
    expect(lineText('z'.repeat(500), 100)).toMatch(/^z+… \(truncated, [\d,]+ more characters\)$/);
    expect(lineText('z'.repeat(500), 100).length).toBeLessThanOrEqual(100);
  });
});

describe('slackText and slackPlain', () => {
  it('slackText escapes plain text', () => {
    expect(slackText('<!here> & co')).toBe('&lt;!here&gt; &amp; co');
  });

  it('slackText strips controls and bidi overrides and stays one line; slackLines keeps line breaks', () => {
    expect(slackText('a\u202E<b>\u001b]0;owned\u0007\nc')).toBe('a&lt;b&gt;]0;owned c');
    expect(slackLines('a\u202E\r\nc\u2066')).toBe('a\nc');
  });

  it('highlightToSlack is one line unless lines are asked for; bold stays one line either way', () => {
    expect(highlightToSlack('x\ny <mark>a\u202E\nb</mark>')).toBe('x y *a b*');
    expect(highlightToSlack('x\ny <mark>a\u202E\nb</mark>', undefined, undefined, { lines: true })).toBe(
      'x\ny *a b*',
    );
  });

  it('htmlText and highlightToHtml strip controls and bidi overrides', () => {
    expect(htmlText('a\u202E\u001b[2J<b>')).toBe('a[2J&lt;b&gt;');
    expect(highlightToHtml('\u2066<mark>\u009bx</mark>')).toBe('<mark>x</mark>');
  });

  it('slackPlain keeps plain_text free of <, > and &', () => {
    expect(slackPlain('<!channel> & x')).toBe('‹!channel› ＆ x');
  });
});
