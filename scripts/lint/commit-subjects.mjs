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
const long = commits.filter((c) => [...c.subject].length > MAX_SUBJECT);
for (const c of long) {
  console.error(
    `${c.hash.slice(0, 10)}: subject is ${[...c.subject].length} characters (at most ${MAX_SUBJECT}): ${c.subject}`,
  );
}
if (long.length > 0) {
  console.error(`commit subjects: ${long.length} of ${commits.length} commits after ${BASE.slice(0, 10)} too long`);
  process.exit(1);
}
console.log(`commit subjects: ${commits.length} commits after ${BASE.slice(0, 10)}, each ≤ ${MAX_SUBJECT} characters`);
