/**
 * The deterministic text skills: `summary` (extractive), `keywords` and `text-checks` (length and keyword checks).
 * Same brief and config, same result: no randomness, no clock, ties broken by position in the text.
 *
 * Each works on the brief's text (jsonPaths.ts, textOfBrief): with config `field`, the string at that dotted path
 * of a JSON brief; without, the `text` string of a brief that is a JSON object with one, else the brief as is.
 *
 * Words for scoring: runs of letters and digits (Unicode), lower-cased, apostrophes kept inside a word ("don't");
 * stop words (STOP_WORDS, English) and one-letter words carry no weight. Word counts (wordCount) count
 * whitespace-separated tokens; character counts count Unicode code points, as the verification rules do.
 */
import { codePoints } from "../../domain/marketplace/evaluate";
import { parseSkillConfig } from "../../domain/agents/skills/config";
import { keywordsConfig, summaryConfig, textChecksConfig } from "../../domain/agents/skills/specs";
import { textOfBrief } from "./jsonPaths";
import type { SkillRun } from "./types";

/** Common English words that say nothing about a text's subject. */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    "a about above after again against all am an and any are aren't as at be because been before being below " +
    "between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each " +
    "few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself " +
    "him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more most " +
    "mustn't my myself no nor not of off on once only or other ought our ours ourselves out over own same shan't " +
    "she she'd she'll she's should shouldn't so some such than that that's the their theirs them themselves then " +
    "there there's these they they'd they'll they're they've this those through to too under until up very was " +
    "wasn't we we'd we'll we're we've were weren't what what's when when's where where's which while who who's " +
    "whom why why's will with won't would wouldn't you you'd you'll you're you've your yours yourself yourselves " +
    "also just may might must shall us one two get got like well much many"
  ).split(" "),
);

const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}\p{N}]+)*/gu;

/** The lower-cased words of `text`, in order (apostrophes normalised to '). */
export function wordsOf(text: string): string[] {
  return (text.match(WORD) ?? []).map((w) => w.toLowerCase().replace(/’/g, "'"));
}

/** Whether `word` (lower-cased) carries meaning: not a stop word, not one letter, not only digits. */
export function isContentWord(word: string): boolean {
  return word.length > 1 && !STOP_WORDS.has(word) && !/^\d+$/.test(word);
}

/** Whitespace-separated tokens of `text`. */
export function wordCount(text: string): number {
  return text.split(/\s+/).filter((t) => t !== "").length;
}

/** Unicode code points of `text`. */
export function charCount(text: string): number {
  return codePoints(text);
}

/**
 * The sentences of `text`: split after ., ! or ? (and a closing quote or bracket) followed by white space, and at
 * blank lines; white space inside a sentence collapsed to one space.
 */
export function sentencesOf(text: string): string[] {
  return text
    .split(/(?<=[.!?]["'”’)\]]?)\s+|\n\s*\n/)
    .map((s) => s.replace(/\s+/g, " ").trim())
    .filter((s) => s !== "");
}

/** How often each content word occurs, in order of first occurrence. */
function contentFrequencies(words: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const w of words) if (isContentWord(w)) counts.set(w, (counts.get(w) ?? 0) + 1);
  return counts;
}

const noText = (what: string) => new Error(`the brief has no text to ${what}`);

// ---------------------------------------------------------------------------------------------------------------
// summary
// ---------------------------------------------------------------------------------------------------------------

export interface Summary {
  summary: string;
  /** The kept sentences, in the text's order. */
  sentences: string[];
  /** Words of the whole text. */
  wordCount: number;
}

/**
 * Extractive summary: each sentence scores the mean frequency (over the whole text) of its content words; the
 * `maxSentences` best (earlier first on a tie) are kept in the text's order.
 */
export function summarise(text: string, maxSentences: number): Summary {
  const sentences = sentencesOf(text);
  if (sentences.length === 0) throw noText("summarise");
  const frequencies = contentFrequencies(wordsOf(text));
  const scored = sentences.map((sentence, index) => {
    const content = wordsOf(sentence).filter(isContentWord);
    const total = content.reduce((sum, w) => sum + (frequencies.get(w) ?? 0), 0);
    return { sentence, index, score: content.length === 0 ? 0 : total / content.length };
  });
  const kept = [...scored]
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, maxSentences)
    .sort((a, b) => a.index - b.index)
    .map((s) => s.sentence);
  return { summary: kept.join(" "), sentences: kept, wordCount: wordCount(text) };
}

/** The `summary` skill's run: the brief's text summarised as its config says. */
export const runSummary: SkillRun = async (job, context) => {
  const config = parseSkillConfig(summaryConfig, context.config);
  return summarise(textOfBrief(job.briefText, config.field), config.maxSentences);
};

// ---------------------------------------------------------------------------------------------------------------
// keywords
// ---------------------------------------------------------------------------------------------------------------

export interface Keywords {
  /** Most frequent first; equal counts in order of first occurrence. */
  keywords: { word: string; count: number }[];
  wordCount: number;
}

/** The `limit` most frequent content words of `text`. */
export function topKeywords(text: string, limit: number): Keywords {
  const words = wordsOf(text);
  if (words.length === 0) throw noText("find keywords in");
  // A Map iterates in insertion order and Array.prototype.sort is stable: ties stay in order of first occurrence.
  const keywords = [...contentFrequencies(words)]
    .map(([word, count]) => ({ word, count }))
    .sort((a, b) => b.count - a.count)
    .slice(0, limit);
  return { keywords, wordCount: wordCount(text) };
}

/** The `keywords` skill's run: the brief's text's top keywords. */
export const runKeywords: SkillRun = async (job, context) => {
  const config = parseSkillConfig(keywordsConfig, context.config);
  return topKeywords(textOfBrief(job.briefText, config.field), config.limit);
};

// ---------------------------------------------------------------------------------------------------------------
// text-checks
// ---------------------------------------------------------------------------------------------------------------

export interface TextChecks {
  wordCount: number;
  charCount: number;
  lines: number;
  /** Every configured keyword occurs (case-insensitively). */
  containsAll: boolean;
  /** The configured keywords that do not occur. */
  missing: string[];
  /** Within every configured length bound. */
  lengthOk: boolean;
  /** What fails, one line each (empty when passed). */
  problems: string[];
  passed: boolean;
}

/** Lines of `text`: none when empty; a final line break does not start another line (as `wc -l` counts a file). */
export function linesOf(text: string): number {
  if (text === "") return 0;
  const breaks = text.match(/\r\n|\r|\n/g)?.length ?? 0;
  return /(\r\n|\r|\n)$/.test(text) ? breaks : breaks + 1;
}

/** Counts `text` and checks it against the keywords and bounds. */
export function checkText(
  text: string,
  checks: { keywords: string[]; minChars?: number; maxChars?: number; minWords?: number; maxWords?: number },
): TextChecks {
  const words = wordCount(text);
  const chars = charCount(text);
  const lower = text.toLowerCase();
  const missing = checks.keywords.filter((k) => !lower.includes(k.toLowerCase()));
  const problems: string[] = [];
  if (checks.minChars !== undefined && chars < checks.minChars)
    problems.push(`${chars} characters, at least ${checks.minChars} required`);
  if (checks.maxChars !== undefined && chars > checks.maxChars)
    problems.push(`${chars} characters, at most ${checks.maxChars} allowed`);
  if (checks.minWords !== undefined && words < checks.minWords)
    problems.push(`${words} words, at least ${checks.minWords} required`);
  if (checks.maxWords !== undefined && words > checks.maxWords)
    problems.push(`${words} words, at most ${checks.maxWords} allowed`);
  const lengthOk = problems.length === 0;
  if (missing.length > 0) problems.push(`missing ${missing.map((k) => JSON.stringify(k)).join(", ")}`);
  return {
    wordCount: words,
    charCount: chars,
    lines: linesOf(text),
    containsAll: missing.length === 0,
    missing,
    lengthOk,
    problems,
    passed: problems.length === 0,
  };
}

/** The `text-checks` skill's run: the brief's text checked against its config. */
export const runTextChecks: SkillRun = async (job, context) => {
  const config = parseSkillConfig(textChecksConfig, context.config);
  return checkText(textOfBrief(job.briefText, config.field), config);
};
