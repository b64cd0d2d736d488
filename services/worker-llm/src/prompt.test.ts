import { describe, expect, it } from 'vitest';
import { JsonNumber, type InputDocument } from '@flowline/graph';
import { conversationRequestSection, cutToBytes, dataBlock, joinParts, resolveBindings, steeringSection } from './prompt';

const doc: InputDocument = {
  run: { input: { q: 'why' } },
  upstream: {},
  input: { status: 'succeeded', attempt: 1, branch: null, output: { text: 'hello', n: 0, empty: null } },
};

describe('prompt composition', () => {
  it('cuts to a UTF-8 byte budget without splitting a character', () => {
    const cut = cutToBytes('aé€😀', 4);
    expect(cut).toEqual({ text: 'aé', bytes: 3, totalBytes: 10 });
    expect(cutToBytes('abc', 10)).toEqual({ text: 'abc', bytes: 3, totalBytes: 3 });
  });

  it('marks a data block cut to its budget and leaves a fitting one unmarked', () => {
    expect(dataBlock('Input data', { a: 1 }, 1000)).toBe('## Input data\n```json\n{\n  "a": 1\n}\n```');
    const cut = dataBlock('Upstream outputs', { big: 'x'.repeat(500) }, 100);
    expect(cut).toMatch(/```\n\[truncated: showing the first 100 of \d+ bytes\]$/);
  });

  it('writes numbers a double cannot hold digit for digit in a data block', () => {
    expect(dataBlock('Input data', { id: new JsonNumber('9007199254740993') }, 1000)).toBe('## Input data\n```json\n{\n  "id": 9007199254740993\n}\n```');
  });

  it('numbers steering oldest first under a final heading, and adds nothing without steering', () => {
    expect(steeringSection(['a', 'b'])).toBe('## Operator steering\n1. a\n2. b');
    expect(steeringSection([])).toBe('');
    expect(joinParts('p', null, '', 's')).toBe('p\n\ns');
  });

  it('resolves bindings to found values, null and zero included, and refuses a missing path naming it', () => {
    expect(resolveBindings({ t: 'input.output.text', n: 'input.output.n', e: 'input.output.empty', q: 'run.input.q' }, doc)).toEqual({
      t: 'hello',
      n: 0,
      e: null,
      q: 'why',
    });
    expect(resolveBindings(undefined, doc)).toBeNull();
    expect(() => resolveBindings({ x: 'input.output.missing' }, doc)).toThrow(/binding "x" \(path input.output.missing\)/);
    try {
      resolveBindings({ x: 'input.output.missing' }, doc);
    } catch (e) {
      expect(e).toMatchObject({ failureClass: 'ValidationFailed' });
    }
  });
});

describe('conversationRequestSection', () => {
  it("carries the run input's text, then the attachments' names", () => {
    expect(conversationRequestSection({ text: 'What is due?' }, 1000)).toBe('## Conversation request\nWhat is due?');
    expect(conversationRequestSection({ text: 'Read these', attachments: [{ fileId: 'f1', name: 'a.pdf' }, { fileId: 'f2', name: 'b.png' }] }, 1000)).toBe(
      '## Conversation request\nRead these\nAttachments: a.pdf, b.png',
    );
  });

  it('reads `message` when there is no `text`, and is empty when the input holds neither', () => {
    expect(conversationRequestSection({ message: 'hi' }, 1000)).toBe('## Conversation request\nhi');
    expect(conversationRequestSection({ other: 1 }, 1000)).toBe('');
    expect(conversationRequestSection(null, 1000)).toBe('');
    expect(conversationRequestSection(['x'], 1000)).toBe('');
  });

  it('cuts the message to its byte budget with the truncation marker, never splitting a character', () => {
    const section = conversationRequestSection({ text: 'é'.repeat(10) }, 5);
    expect(section).toBe('## Conversation request\néé\n[truncated: showing the first 4 of 20 bytes]');
  });
});
