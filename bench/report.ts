/** Printing benchmark figures. */

/** A text table: columns padded to their widest cell, `rightAligned` columns (numbers) padded on the left. */
export function printTable(header: string[], rows: string[][], rightAligned: number[] = []): void {
  const widths = header.map((title, c) => Math.max(title.length, ...rows.map((row) => (row[c] ?? "").length)));
  const render = (cells: string[]) =>
    cells
      .map((cell, c) => (rightAligned.includes(c) ? cell.padStart(widths[c]) : cell.padEnd(widths[c])))
      .join("  ")
      .trimEnd();
  console.log(render(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const row of rows) console.log(render(row));
}
