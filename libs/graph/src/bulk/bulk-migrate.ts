/**
 * Bulk migration of live runs to another version of their definition: the request's
 * options, the canary share and the error-rate gate that pause the job, and each run's
 * outcome from its migration plan. The per-run decision is the single-run planner's
 * (`planMigration`); this file decides only how a job of many runs proceeds.
 */
import type { Issue } from '../model';
import type { MigrationPlan, MigrationReason } from '../migrate';
import type { BulkProgress, BulkVerbAnswer } from './bulk-action';

/** The options of a bulk migrate (`action: "migrate"`). */
export interface BulkMigrateOptions {
  /** the saved version of the filtered definition every run moves to */
  toVersion: number;
  /** old node key → new node key, applied to every run (as the single-run route's `nodeMap`) */
  nodeMap: Record<string, string>;
  /** migrate this share (0 < p < 100) of the job's runs first, then pause until resumed; null: no canary */
  canaryPercent: number | null;
  /** pause when the share of runs that failed to migrate (since the last resume) exceeds this (0 ≤ r < 1); null: never */
  maxErrorRate: number | null;
}

/** Why a job is paused: its canary share is done, or too many runs failed to migrate. */
export const BULK_PAUSE_REASONS = ['canary', 'errorRate'] as const;
export type BulkPauseReason = (typeof BULK_PAUSE_REASONS)[number];

/**
 * What a paused-and-resumed job remembers: whether its canary was released, and the counts at
 * the last resume (the error rate is measured over runs processed since, so a resumed job is
 * not paused again by the failures the operator already looked at).
 */
export interface BulkGateState {
  canaryReleased: boolean;
  baseDone: number;
  baseFailed: number;
}

/** A fresh job's gate: canary not released, rate measured from the first run. */
export const INITIAL_BULK_GATE: BulkGateState = { canaryReleased: false, baseDone: 0, baseFailed: 0 };

/**
 * The fewest runs processed (since the last resume) before the error rate can pause a job:
 * one refusal among the first runs is not a rate.
 */
export const DEFAULT_ERROR_RATE_MIN_RUNS = 20;

const NODE_KEY = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_VERSION = 2_147_483_647;

/** The migrate members of a bulk request, unchecked. */
export interface BulkMigrateInput {
  toVersion?: unknown;
  nodeMap?: unknown;
  canaryPercent?: unknown;
  maxErrorRate?: unknown;
}

/** The members only a bulk migrate takes (refused on other actions). */
export const BULK_MIGRATE_MEMBERS = ['toVersion', 'nodeMap', 'canaryPercent', 'maxErrorRate'] as const;

/**
 * Checks a bulk migrate's options: `toVersion` a positive integer; `nodeMap` (optional) an
 * object of node key → node key; `canaryPercent` (optional) a number strictly between 0 and
 * 100; `maxErrorRate` (optional) a number from 0 (pause on the first failure past the minimum
 * sample) up to but excluding 1. Issues are keyed by member.
 */
export function checkBulkMigrate(input: BulkMigrateInput): { ok: true; options: BulkMigrateOptions } | { ok: false; issues: Issue[] } {
  const issues: Issue[] = [];
  const v = input.toVersion;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > MAX_VERSION) issues.push({ key: 'toVersion', message: 'a migrate names a saved version: a positive integer' });
  let nodeMap: Record<string, string> = {};
  if (input.nodeMap !== undefined && input.nodeMap !== null) {
    const m = input.nodeMap;
    if (typeof m !== 'object' || Array.isArray(m)) issues.push({ key: 'nodeMap', message: 'must be an object of old node key → new node key' });
    else {
      const entries = Object.entries(m as Record<string, unknown>);
      const bad = entries.filter(([k, to]) => !NODE_KEY.test(k) || typeof to !== 'string' || !NODE_KEY.test(to));
      for (const [k] of bad) issues.push({ key: `nodeMap.${k}`, message: 'keys and values are node keys (1–64 of A-Z a-z 0-9 _ -)' });
      if (bad.length === 0) nodeMap = Object.fromEntries(entries) as Record<string, string>;
    }
  }
  const canary = input.canaryPercent ?? null;
  if (canary !== null && (typeof canary !== 'number' || !Number.isFinite(canary) || canary <= 0 || canary >= 100)) {
    issues.push({ key: 'canaryPercent', message: 'must be a number between 0 and 100 (exclusive): the share migrated before the job pauses' });
  }
  const rate = input.maxErrorRate ?? null;
  if (rate !== null && (typeof rate !== 'number' || !Number.isFinite(rate) || rate < 0 || rate >= 1)) {
    issues.push({ key: 'maxErrorRate', message: 'must be a number from 0 up to (not including) 1: the share of failed migrations that pauses the job' });
  }
  if (issues.length > 0) return { ok: false, issues };
  return { ok: true, options: { toVersion: v as number, nodeMap, canaryPercent: canary as number | null, maxErrorRate: rate as number | null } };
}

/** The number of runs in the canary share of a job of `total` runs: at least one when there are runs. */
export function bulkCanarySize(total: number, canaryPercent: number): number {
  return total === 0 ? 0 : Math.max(1, Math.ceil((total * canaryPercent) / 100));
}

/**
 * Why the job must pause now, given its progress after a batch, or null to go on. A finished
 * job never pauses. The canary pauses once its share is processed, until released by a
 * resume; the error rate pauses once at least `minRuns` runs were processed since the last
 * resume and the share of them that failed exceeds `maxErrorRate`.
 */
export function bulkPauseReason(p: BulkProgress, o: BulkMigrateOptions, gate: BulkGateState, minRuns = DEFAULT_ERROR_RATE_MIN_RUNS): BulkPauseReason | null {
  const processed = p.done + p.failed;
  if (processed >= p.total) return null;
  if (o.canaryPercent !== null && !gate.canaryReleased && processed >= bulkCanarySize(p.total, o.canaryPercent)) return 'canary';
  if (o.maxErrorRate !== null) {
    const failed = p.failed - gate.baseFailed;
    const n = p.done - gate.baseDone + failed;
    if (n >= Math.max(1, minRuns) && failed / n > o.maxErrorRate) return 'errorRate';
  }
  return null;
}

/**
 * How many runs the next batch may take: `batchSize`, cut at the canary's boundary while the
 * canary is not released (so the job pauses after exactly its canary share).
 */
export function bulkBatchLimit(p: BulkProgress, o: BulkMigrateOptions, gate: BulkGateState, batchSize: number): number {
  if (o.canaryPercent === null || gate.canaryReleased) return batchSize;
  const left = bulkCanarySize(p.total, o.canaryPercent) - (p.done + p.failed);
  return left > 0 ? Math.min(batchSize, left) : batchSize;
}

/** The gate after a resume: the canary released, the error rate measured afresh from now. */
export function resumedGate(p: BulkProgress): BulkGateState {
  return { canaryReleased: true, baseDone: p.done, baseFailed: p.failed };
}

/** One run's answer to its migration: the verb answer, a refusal's code and its reasons. */
export interface BulkMigrateAnswer {
  answer: BulkVerbAnswer;
  /** `needsMapping` | `incompatible` | another refusal code; null when migrated or already there */
  reason: string | null;
  /** the planner's reasons for a refusal (empty otherwise) */
  reasons: MigrationReason[];
}

/**
 * A run's outcome from what its (non-dry-run) migration came to: executed → applied; a
 * compatible plan the store did not execute is one with nothing to move — the run already
 * stands on the target (a job replayed after a crash finds the runs it migrated this way) →
 * already; any other verdict → refused, with the verdict as the code and the planner's reasons.
 */
export function bulkMigrateAnswer(res: { executed: boolean; plan: MigrationPlan }): BulkMigrateAnswer {
  if (res.executed) return { answer: 'applied', reason: null, reasons: [] };
  if (res.plan.verdict === 'compatible') return { answer: 'already', reason: null, reasons: [] };
  return { answer: 'refused', reason: res.plan.verdict, reasons: res.plan.reasons };
}
