// Nodes with `group = "x"` serve the models declared with `group = "x"`; models without a group go
// to nodes without a group.
import { predicateFilter } from '../filter.ts';

export const sameGroup = predicateFilter(
  'same-group',
  (req, node) =>
    node.spec.group === req.group
      ? undefined
      : { code: 'group_mismatch', detail: `node group ${node.spec.group ?? '(none)'}, model group ${req.group ?? '(none)'}` },
  'model',
);
