/**
 * Templates judged at validation (`template/`): every member a kind marks `template` is
 * parsed, its roots and state keys checked, and a problem is an error keyed to the node and
 * named by its place, `nodes.<key>.config.<member>[.<inside>]: …`. A stored graph re-parsed
 * only warns, so a definition saved before templates existed (with a literal `{{` that is not
 * a sound template) keeps loading; such a node fails ValidationFailed when it runs.
 */
import type { GraphNode, Json } from '../model';
import { NODE_KIND_SPECS } from '../spec/node-kinds';
import { checkTemplateValue, declaredStateKeys, type TemplateCheckContext } from '../template/check';
import { templatePlace, valuePathText } from '../template/render';
import type { Issues } from './util';
import { hasOwn } from './util';

export function checkTemplates(nodes: readonly GraphNode[], rawState: unknown, stored: boolean, out: Issues): void {
  const ctx: TemplateCheckContext = { stateKeys: declaredStateKeys(rawState), nodeKeys: new Set(nodes.map((n) => n.key)) };
  for (const node of nodes) {
    for (const member of NODE_KIND_SPECS[node.kind].config) {
      if (member.template !== true || !hasOwn(node.config, member.name)) continue;
      const problem = checkTemplateValue(node.config[member.name] as Json, ctx);
      if (problem === null) continue;
      const message = `${templatePlace(node.key, member.name, valuePathText(problem.path))}: ${problem.error}`;
      if (stored) out.warn(node.key, message);
      else out.error(node.key, message);
    }
    if (node.kind === 'End' && hasOwn(node.config, 'outputTemplate') && hasOwn(node.config, 'resultPath')) {
      out.error(node.key, `${templatePlace(node.key, 'outputTemplate')}: outputTemplate and resultPath both say what output.result is; set one`);
    }
    if (node.kind === 'Subworkflow' && hasOwn(node.config, 'inputTemplate') && hasOwn(node.config, 'inputBinding')) {
      out.error(node.key, `${templatePlace(node.key, 'inputTemplate')}: inputTemplate and inputBinding both say what the child input is; set one`);
    }
  }
}
