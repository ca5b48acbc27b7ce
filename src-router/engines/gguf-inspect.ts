import type { GgufValue } from './llama-node/gguf-format';

/** Architectures that only embed (no text generation). */
const EMBEDDING_ARCHITECTURES = new Set([
  'bert',
  'nomic-bert',
  'nomic-bert-moe',
  'jina-bert-v2',
  'jina-bert-v3',
  'neo-bert',
  'modern-bert',
  't5encoder',
]);

/** llama.cpp's pooling types: 0 none, 1 mean, 2 cls, 3 last, 4 rank (a reranker). */
const EMBEDDING_POOLING = new Set([1, 2, 3]);

export interface GgufFacts {
  architecture: string | null;
  name: string | null;
  contextLength: number | null;
  embedding: boolean;
  /** The file is a vision projector (an mmproj), not a model of its own. */
  projector: boolean;
}

const str = (v: GgufValue | undefined) => (typeof v === 'string' ? v : null);
const int = (v: GgufValue | undefined) => (typeof v === 'number' && Number.isInteger(v) ? v : null);

/** What a GGUF header says about serving the file, from its metadata. Pure. */
export function ggufFacts(metadata: ReadonlyMap<string, GgufValue>): GgufFacts {
  const architecture = str(metadata.get('general.architecture'));
  const pooling = architecture ? int(metadata.get(`${architecture}.pooling_type`)) : null;
  return {
    architecture,
    name: str(metadata.get('general.name')),
    contextLength: architecture ? int(metadata.get(`${architecture}.context_length`)) : null,
    embedding:
      (architecture !== null && EMBEDDING_ARCHITECTURES.has(architecture)) ||
      (pooling !== null && EMBEDDING_POOLING.has(pooling)),
    projector: architecture === 'clip' || str(metadata.get('general.type')) === 'mmproj',
  };
}

/** The capabilities a model config gets from the header and a projector beside it. Pure. */
export function suggestedCapabilities(facts: GgufFacts, hasProjector: boolean): string[] {
  if (facts.projector) return [];
  if (facts.embedding) return ['embedding'];
  return hasProjector ? ['text', 'multimodal'] : ['text'];
}
