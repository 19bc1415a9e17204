/**
 * The change feed's record of what it has read (src/sql/feed-cursor.ts): a late push of an entry the
 * poll read is not announced twice, a number the poll passed but did not read there makes it look
 * now, and an entry read last that is gone or replaced (a restored database) is noticed.
 */
import { describe, expect, it } from 'vitest';
import { FeedCursor, type ChangeFeedEntry } from '../../src/sql/feed-cursor.js';

const entry = (seq: number, clientId: string, changedAt = seq): ChangeFeedEntry => ({ seq, clientId, changedAt });

describe('FeedCursor', () => {
  it('announces a change once, whether the push or the poll sees it first', () => {
    const cursor = new FeedCursor();
    cursor.startAt(10);
    expect(cursor.push(11, 'a')).toBe('new');
    expect(cursor.push(11, 'a')).toBe('known');
    expect([entry(10, 'z'), entry(11, 'a'), entry(12, 'b')].map((row) => cursor.take(row))).toEqual([false, false, true]);
    expect(cursor.last).toBe(12);
    expect(cursor.readFrom).toBe(11);
    expect(cursor.push(12, 'b')).toBe('known'); // a late push of an entry the poll read
  });

  it('makes the poll look now on a push numbered at or below what it read, for another account', () => {
    const cursor = new FeedCursor();
    cursor.startAt(0);
    cursor.take(entry(1, 'a'));
    expect(cursor.push(1, 'b')).toBe('suspect');
  });

  it('notices that the entry read last is gone, or another took its number', () => {
    const cursor = new FeedCursor();
    cursor.startAt(0);
    expect(cursor.lost([])).toBe(false); // an empty feed has nothing to lose
    cursor.take(entry(5, 'a', 100));
    expect(cursor.lost([entry(5, 'a', 100), entry(6, 'b')])).toBe(false);
    expect(cursor.lost([entry(6, 'b')])).toBe(true);
    expect(cursor.lost([entry(5, 'b', 100)])).toBe(true);
    expect(cursor.lost([entry(5, 'a', 200)])).toBe(true);
  });

  it('checks the entry it starts at once it has read it, and forgets everything when started over', () => {
    const cursor = new FeedCursor();
    cursor.startAt(7);
    expect(cursor.lost([entry(7, 'a')])).toBe(false); // not yet read: only its presence counts
    cursor.take(entry(7, 'a'));
    expect(cursor.lost([entry(7, 'b')])).toBe(true);
    cursor.push(9, 'c');
    cursor.startAt(3);
    expect(cursor.last).toBe(3);
    expect(cursor.push(9, 'c')).toBe('new');
  });
});
