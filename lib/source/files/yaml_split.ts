/**
 * Splits a multi-document YAML text into its documents at `---` marker lines, without parsing:
 * a line starting with `---` followed by a space, a tab or the line end is a document start
 * wherever it is (YAML forbids that in content at column 0), and `%` directive lines just before
 * it belong to the document it starts. Each document keeps its first line number, so a parser's
 * error line can be reported in the file's numbering, and an unchanged document can be
 * recognised by its text.
 * @module
 */

/** One document's text and the 1-based line of the file it starts at. */
export interface YamlChunk {
  text: string;
  line: number;
}

/** A line with content: not blank, a comment, a directive, `...` or a bare `---` marker. */
const contentLine = /^[ \t]*(?!#|%|\.\.\.[ \t\r]*$|---(?:[ \t]+(?:#.*)?)?\r?$)\S/m;

/** Whether a chunk holds anything but blank lines, comments, directives and markers. */
export function hasContent(text: string): boolean {
  return contentLine.test(text);
}

function countLines(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = text.indexOf("\n", from); i !== -1 && i < to; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/** The documents of `text` in order (a text without markers is one document). */
export function splitYamlDocuments(text: string): YamlChunk[] {
  const starts: number[] = [0];
  for (const m of text.matchAll(/^---(?:[ \t\r]|$)/gm)) {
    let s = m.index;
    if (s === 0) continue;
    // Directive lines right before the marker start the document with it.
    for (;;) {
      const prev = text.lastIndexOf("\n", s - 2);
      const lineStart = prev + 1;
      if (lineStart <= starts[starts.length - 1] || text[lineStart] !== "%") break;
      s = lineStart;
    }
    if (s > starts[starts.length - 1]) starts.push(s);
  }
  const out: YamlChunk[] = [];
  let line = 1;
  for (let k = 0; k < starts.length; k++) {
    const end = k + 1 < starts.length ? starts[k + 1] : text.length;
    // A chunk ends with the newline before the next marker; drop it so the text is the lines.
    const stop = k + 1 < starts.length ? end - 1 : end;
    out.push({ text: text.slice(starts[k], stop), line });
    line += countLines(text, starts[k], end);
  }
  return out;
}
