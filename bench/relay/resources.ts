/**
 * Server-side resource sampling for the relay benchmark, taken in the parent process (which hosts
 * the server under test) when the load generator opens and closes a measured window:
 * CPU of this process, CPU of the PostgreSQL backends connected to the bench database (read from
 * /proc, so only when PostgreSQL runs on this machine), CPU of the whole machine (/proc/stat, which
 * shows load from anything else running), CPU of the kernel's DAMON memory monitors (`kdamond`
 * threads: on the VMs this project is measured on, the platform runs one that samples memory every
 * 500 ms and takes 10-25 ms of a core each time; docs/performance.md, "Where the paced tail comes
 * from"), and this process's event-loop delay.
 */
import fs from 'node:fs';
import { monitorEventLoopDelay, performance, type IntervalHistogram } from 'node:perf_hooks';
import type pg from 'pg';

/** Event-loop delay sampling interval (ms). Node's histogram includes it, so it is subtracted. */
const ELD_RESOLUTION_MS = 2;

/** Clock ticks per second for /proc/<pid>/stat (USER_HZ; 100 on every mainstream Linux). */
const USER_HZ = 100;

interface Snapshot {
  at: number;
  selfMs: number;
  pgMs: Map<number, number>;
  kdamondMs: number | undefined;
  machine: { busy: number; total: number } | undefined;
}

export interface Resources {
  /** Percent of one core, over the measured window. */
  serverCpuPct: number;
  pgCpuPct: number | undefined;
  /** Percent of one core summed over all cores (200 = both cores of a 2-core machine busy). */
  machineCpuPct: number | undefined;
  /** Percent of one core used by the kernel's DAMON threads (`kdamond*`); undefined when none runs. */
  kdamondCpuPct: number | undefined;
  /** How late the event loop ran a timer (beyond its interval): time the loop was blocked. */
  loopDelayP50Ms: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
}

function procCpuMs(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / USER_HZ; // utime, stime
  } catch {
    return undefined;
  }
}

function machineTicks(): { busy: number; total: number } | undefined {
  try {
    const cpu = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const total = cpu.slice(0, 8).reduce((a, b) => a + b, 0);
    return { busy: total - cpu[3]! - cpu[4]!, total };
  } catch {
    return undefined;
  }
}

/** Pids of the kernel's DAMON threads (comm `kdamond.N`). */
function kdamondPids(): number[] {
  try {
    return fs
      .readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .filter((d) => {
        try {
          return fs.readFileSync(`/proc/${d}/comm`, 'utf8').startsWith('kdamond');
        } catch {
          return false;
        }
      })
      .map(Number);
  } catch {
    return [];
  }
}

/** Summed CPU (ms) of `pids`, or undefined when there are none or one has exited. */
function sumCpuMs(pids: number[]): number | undefined {
  let sum = 0;
  for (const pid of pids) {
    const ms = procCpuMs(pid);
    if (ms === undefined) return undefined;
    sum += ms;
  }
  return pids.length === 0 ? undefined : sum;
}

const lag = (ns: number) => Math.max(0, ns / 1e6 - ELD_RESOLUTION_MS);

export class ResourceSampler {
  private readonly eld: IntervalHistogram = monitorEventLoopDelay({ resolution: ELD_RESOLUTION_MS });
  private start: Snapshot | undefined;
  private pids: number[] = [];
  private kdamonds: number[] = [];
  readonly results = new Map<string, Resources>();

  /**
   * @param sql a connection to the bench database (finds the PostgreSQL backends to sample).
   * @param serverPids when the servers under test are other processes (bench/cluster: the
   *   instances), their pids: `serverCpuPct` is then their summed CPU instead of this process's.
   */
  constructor(
    private readonly sql: pg.Client,
    private readonly serverPids?: () => number[],
  ) {}

  private selfMs(): number {
    if (!this.serverPids) {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    }
    return this.serverPids().reduce((sum, pid) => sum + (procCpuMs(pid) ?? 0), 0);
  }

  private async snapshot(): Promise<Snapshot> {
    const pgMs = new Map<number, number>();
    for (const pid of this.pids) {
      const ms = procCpuMs(pid);
      if (ms !== undefined) pgMs.set(pid, ms);
    }
    return { at: performance.now(), selfMs: this.selfMs(), pgMs, kdamondMs: sumCpuMs(this.kdamonds), machine: machineTicks() };
  }

  /** Called on the load generator's `mark` messages; `key` names scenario and phase. */
  async mark(key: string, edge: 'start' | 'end'): Promise<void> {
    if (edge === 'start') {
      const { rows } = await this.sql.query<{ pid: number }>('select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()');
      this.pids = rows.map((r) => r.pid);
      this.kdamonds = kdamondPids();
      this.eld.reset();
      this.eld.enable();
      this.start = await this.snapshot();
      return;
    }
    const s = this.start;
    if (!s) return;
    const e = await this.snapshot();
    this.eld.disable();
    const wall = e.at - s.at;
    let pgMs = 0;
    let pgSeen = 0;
    for (const [pid, ms] of e.pgMs) {
      const before = s.pgMs.get(pid);
      if (before !== undefined) {
        pgMs += ms - before;
        pgSeen++;
      }
    }
    this.results.set(key, {
      serverCpuPct: (100 * (e.selfMs - s.selfMs)) / wall,
      pgCpuPct: pgSeen > 0 ? (100 * pgMs) / wall : undefined,
      machineCpuPct:
        s.machine && e.machine ? (100 * (e.machine.busy - s.machine.busy) * (1000 / USER_HZ)) / wall : undefined,
      kdamondCpuPct: s.kdamondMs !== undefined && e.kdamondMs !== undefined ? (100 * (e.kdamondMs - s.kdamondMs)) / wall : undefined,
      loopDelayP50Ms: lag(this.eld.percentile(50)),
      loopDelayP99Ms: lag(this.eld.percentile(99)),
      loopDelayMaxMs: lag(this.eld.max),
    });
    this.start = undefined;
  }
}
