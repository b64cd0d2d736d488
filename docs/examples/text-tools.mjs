// A tool module: load it with TOOL_MODULES=./docs/examples/text-tools.mjs on the tool
// worker, the LLM worker (for Agents) and the API (so graphs may name its tools).
// Tools are read-only: they compute or look things up, they never change the world.

/** @type {import('@flowline/tools').ToolDefinition[]} */
export const tools = [
  {
    name: 'word_count',
    description: 'Counts the words and characters of a text.',
    argumentsSchema: {
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
      additionalProperties: false,
    },
    requiresAllowedUrls: false,
    run(args, ctx) {
      if (ctx.signal.aborted) throw ctx.signal.reason;
      const text = String(args.text);
      const words = text.split(/\s+/).filter((w) => w.length > 0).length;
      return { words, characters: [...text].length };
    },
  },
];
