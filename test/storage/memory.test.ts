// The storage suite against the in-memory backend.

import { openMemoryStorage } from '../../src/storage/memory.js';
import { storageSuite } from './suite.js';

storageSuite('memory', async () => {
  const storage = await openMemoryStorage();
  return { storage, dispose: () => storage.close() };
});
