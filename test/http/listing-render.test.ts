// The listing renderers of src/api/listing-lines.ts against JSON.stringify, byte for byte: ListObjects
// and ListUsers pages (`objectPageJson`, `userPageJson`; undefined for an id JSON escapes, so the
// caller stringifies), and an unpaged stream's lines (`ObjectLines` without paging) over ids JSON
// escapes or writes as multi-byte UTF-8, rendered across many small buffers.

import { describe, expect, test } from 'vitest';
import { ObjectLines, objectPageJson, userPageJson } from '../../src/api/listing-lines.js';
import { userOfKey } from '../../src/engine/evaluation/list/pages.js';

const text = (bytes: Uint8Array | undefined): string | undefined =>
  bytes === undefined ? undefined : Buffer.from(bytes).toString('utf8');

describe('listing renderers', () => {
  test('a ListObjects page is JSON.stringify of {objects, continuation_token}', () => {
    for (const objects of [[], ['doc:1'], ['doc:1', 'doc:a-b_c.d', `doc:${'x'.repeat(300)}`, 'folder:~!@$%^&*()']]) {
      for (const token of ['', 'AbC-_09']) {
        expect(text(objectPageJson(objects, token))).toBe(JSON.stringify({ objects, continuation_token: token }));
      }
    }
    for (const odd of ['doc:"q', 'doc:\\', 'doc:é', 'doc:\u0001', 'doc:😀'])
      expect(objectPageJson(['doc:1', odd], 'T')).toBeUndefined();
  });

  test('a ListUsers page is JSON.stringify of {users, continuation_token}, each user as userOfKey builds it', () => {
    const keys = ['user:anne', 'user:*', 'team:x#member', 'group:a:b#rel', 'user:a*', 'team:*x'];
    for (const page of [[], keys, ['user:*'], ['team:x#member']]) {
      for (const token of ['', 'AbC-_09']) {
        const want = JSON.stringify({ users: page.map(userOfKey), continuation_token: token });
        expect(text(userPageJson(page, token))).toBe(want);
      }
    }
    for (const odd of ['user:"q', 'user:é', 'team:x#mé']) expect(userPageJson(['user:anne', odd], '')).toBeUndefined();
  });

  test('an unpaged stream’s lines are {"result":{"object"}} lines, over buffers of any size', () => {
    const objects = Array.from({ length: 500 }, (_, i) =>
      i % 7 === 0 ? `doc:${i}"é\\` : i % 11 === 0 ? `doc:${i}😀\n` : `doc:${i}${'y'.repeat(i % 40)}`,
    );
    const want = objects.map((object) => `{"result":${JSON.stringify({ object })}}\n`).join('');
    const lines = new ObjectLines(objects);
    for (const room of [0, 1, 3]) {
      const source = new ObjectLines(objects);
      const buf = Buffer.alloc(lines.maxLineBytes + room * 97);
      let got = '';
      for (let end = source.render(buf, 0); end > 0; end = source.render(buf, 0)) got += buf.toString('utf8', 0, end);
      expect(got).toBe(want);
    }
  });
});
