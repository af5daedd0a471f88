// Lint check: every commit after BASE has a one-line subject of at most 72 characters.
//
// BASE is the first commit of this rule's era: the commits before it stay as they are, every
// commit after it is checked. The check works in any checkout: in a full clone it reads
// BASE..HEAD; when BASE is missing (a shallow clone, a fetch of one branch) it checks the commits
// that exist and were committed after BASE's commit time; outside a git checkout (a package, a
// source tarball) there is no history to check and it passes, saying so.
import { execFileSync } from 'node:child_process';

const BASE = '0dd1b9837ddb23b059e4b2f893f2ede2850073c3';
/** BASE's committer time (Unix seconds), for checkouts that do not hold BASE itself. */
const BASE_TIME = 1795777481;
const MAX_SUBJECT = 72;
/**
 * Commits already in main's history whose subjects are too long (74, 75 and 73 characters): the
 * first two merged before this check ran on their branch, the third (86057b8, a CHANGELOG commit)
 * merged into a work branch before the check ran on main. Rewording them would rewrite every
 * commit after them (merges included) that other branches had already merged; they are named
 * here instead, and no other commit is excused.
 */
const RECORDED = new Set([
  '0ad780f4f6b64ccbd8b6b0dffb70aede5c9f4488',
  '968a292d44e6fa7da533c41eb4100d6916769c9c',
  '86057b8776120b46b84458e57e37fe5adc57baf8',
]);

/** Runs git with `args`; null when git or the repository is not there. */
function git(args) {
  try {
    return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return null;
  }
}

function commitsToCheck() {
  if (git(['rev-parse', '--is-inside-work-tree']) === null) return null;
  const fmt = '--format=%H%x09%ct%x09%s';
  const hasBase = git(['cat-file', '-e', `${BASE}^{commit}`]) !== null;
  const log = hasBase ? git(['log', fmt, `${BASE}..HEAD`]) : git(['log', fmt, 'HEAD']);
  if (log === null) return [];
  const rows = log
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [hash, time, ...rest] = line.split('\t');
      return { hash, time: Number(time), subject: rest.join('\t') };
    });
  return hasBase ? rows : rows.filter((r) => r.time > BASE_TIME);
}

const commits = commitsToCheck();
if (commits === null) {
  console.log('commit subjects: not a git checkout, nothing to check');
  process.exit(0);
}
const long = commits.filter((c) => [...c.subject].length > MAX_SUBJECT && !RECORDED.has(c.hash));
for (const c of long) {
  console.error(
    `${c.hash.slice(0, 10)}: subject is ${[...c.subject].length} characters (at most ${MAX_SUBJECT}): ${c.subject}`,
  );
}
if (long.length > 0) {
  console.error(`commit subjects: ${long.length} of ${commits.length} commits after ${BASE.slice(0, 10)} too long`);
  process.exit(1);
}
const excused = commits.filter((c) => RECORDED.has(c.hash)).length;
console.log(
  `commit subjects: ${commits.length} commits after ${BASE.slice(0, 10)}, each ≤ ${MAX_SUBJECT} characters` +
    (excused > 0 ? ` but the ${excused} recorded exceptions` : ''),
);
