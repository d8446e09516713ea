// A node serves a model only if its allow-list and its discovery state allow it (untried nodes
// allow everything their allow-list does), and its listed status does not hold it back: a router's
// child that failed (with its exit code) or a model still downloading is listed but cannot answer.
import { allowsModel } from '#src/discovery/index.ts';
import { entryHold } from '#src/kinds/index.ts';
import { predicateFilter } from '../filter.ts';

export const servesModel = predicateFilter(
  'serves-model',
  (req, node) => {
    const allowed = allowsModel(node.discovery, req.model, node.modelsById, node.spec.allowedModels);
    if (allowed.ok) {
      const entry = node.modelsById.get(req.model);
      const hold = entry === undefined ? undefined : entryHold(entry);
      if (hold === undefined) return undefined;
      return { code: hold.reason === 'failed' ? 'model_failed' : 'downloading', detail: hold.detail };
    }
    const detail =
      allowed.reason === 'not_allowed'
        ? "not among the models the node's allow-list (models) permits"
        : allowed.reason === 'expired'
          ? `model listing failed ${node.discovery.fails} times in a row`
          : allowed.reason === 'empty'
            ? 'the node lists no models'
            : `not among the ${node.discovery.models.length} models the node lists`;
    return { code: allowed.reason, detail };
  },
  'model',
);
