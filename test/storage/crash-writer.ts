// Child process for crash.test.ts: opens LevelDB at argv[2], then writes single tuples forever,
// printing `ack <n> <revision>` only after each write's promise has resolved (i.e. after the
// synced batch). The parent SIGKILLs it mid-burst. Run with `node --import tsx`.

import { openLevelStorage } from '../../src/storage/level.js';

const dir = process.argv[2];
if (!dir) throw new Error('usage: crash-writer.ts <dir>');
const storage = await openLevelStorage(dir);
const existing = (await storage.listStores({ pageSize: 1 })).items[0];
const storeId = existing?.id ?? (await storage.createStore('crash')).id;
const start = await storage.revision(storeId);
process.stdout.write(`ready ${process.pid} ${storeId} ${start}\n`);
for (let n = start; ; n++) {
  const r = await storage.writeTuples(storeId, {
    deletes: [],
    writes: [{ object: `doc:${n}`, relation: 'viewer', user: `user:${n % 7}` }],
    onDuplicate: 'error',
    onMissing: 'error',
  });
  process.stdout.write(`ack ${n} ${r.revision}\n`);
}
