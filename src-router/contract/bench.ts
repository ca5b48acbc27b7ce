import { z } from 'zod';

/**
 * Benchmark runs kept in a node's store (ASSET-1): what `routerdesk bench` recorded — its version, the machine, the
 * summary and every row — as the console API answers them (`GET /router/v1/console/bench/runs[/:id]`).
 */

export const benchMachineSchema = z
  .object({
    hostname: z.string(),
    platform: z.string(),
    arch: z.string(),
    node: z.string().describe('Node.js version'),
    cores: z.number().int(),
    cpu: z.string(),
    memoryBytes: z.number(),
  })
  .strict();
export type BenchMachine = z.infer<typeof benchMachineSchema>;

export const benchSummaryLineSchema = z
  .object({
    benchmark: z.string(),
    measure: z.string(),
    value: z.string(),
    ratio: z.number().nullable(),
    against: z.string(),
  })
  .strict();

export const benchRunSchema = z
  .object({
    id: z.string(),
    startedAt: z.string().describe('ISO time'),
    finishedAt: z.string().describe('ISO time'),
    version: z.string(),
    quick: z.boolean(),
    benchmarks: z.array(z.string()),
    failed: z.array(z.string()),
    machine: benchMachineSchema,
    summary: z.array(benchSummaryLineSchema),
    rowCount: z.number().int(),
  })
  .strict();
export type BenchRunWire = z.infer<typeof benchRunSchema>;

/** One result row, as `--json` writes it: `benchmark`, `scenario`, the benchmark's own fields. */
export const benchRowSchema = z
  .object({ benchmark: z.string(), scenario: z.string(), fields: z.record(z.string(), z.unknown()) })
  .strict();
export type BenchRowWire = z.infer<typeof benchRowSchema>;

/** Newest first. */
export const benchRunListSchema = z.object({ runs: z.array(benchRunSchema) }).strict();
export type BenchRunList = z.infer<typeof benchRunListSchema>;

export const benchRunDetailSchema = z.object({ run: benchRunSchema, rows: z.array(benchRowSchema) }).strict();
export type BenchRunDetail = z.infer<typeof benchRunDetailSchema>;

/** `GET /router/v1/console/bench/runs` query: how many runs, newest first. */
export const benchRunListQuerySchema = z
  .object({ limit: z.coerce.number().int().min(1).max(500).default(50) })
  .strict();
