/**
 * Two heap snapshots of one process compared (bench/soak): self sizes by
 * constructor in each, and the objects new in the later one (an id the earlier
 * one lacks) grouped by the older object that holds them, with that object's
 * retainers: which map, array or record the growth hangs from.
 */
import { readFileSync } from 'node:fs';

/** Bytes and count of a group of heap objects. */
export interface HeapTotal {
  bytes: number;
  count: number;
}

/** A heap snapshot's arrays, with the offsets of the fields read here. */
class Snapshot {
  readonly nodes: number[];
  readonly edges: number[];
  readonly strings: string[];
  readonly width: number;
  readonly edgeWidth: number;
  readonly nodeTypes: string[];
  readonly edgeTypes: string[];
  readonly field: { type: number; name: number; id: number; size: number; edges: number };
  readonly edgeField: { type: number; name: number; to: number };
  /** Index of each node's first edge in `edges` (one more entry: the end). */
  readonly firstEdge: Uint32Array;

  constructor(path: string) {
    const json = JSON.parse(readFileSync(path, 'utf8')) as {
      snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
      nodes: number[];
      edges: number[];
      strings: string[];
    };
    const { meta } = json.snapshot;
    this.nodes = json.nodes;
    this.edges = json.edges;
    this.strings = json.strings;
    this.width = meta.node_fields.length;
    this.edgeWidth = meta.edge_fields.length;
    this.nodeTypes = meta.node_types[0];
    this.edgeTypes = meta.edge_types[0];
    const at = (name: string) => meta.node_fields.indexOf(name);
    this.field = { type: at('type'), name: at('name'), id: at('id'), size: at('self_size'), edges: at('edge_count') };
    this.edgeField = { type: meta.edge_fields.indexOf('type'), name: meta.edge_fields.indexOf('name_or_index'), to: meta.edge_fields.indexOf('to_node') };
    const count = this.nodes.length / this.width;
    this.firstEdge = new Uint32Array(count + 1);
    for (let node = 0, edge = 0; node < count; node += 1) {
      this.firstEdge[node] = edge;
      edge += this.nodes[node * this.width + this.field.edges]! * this.edgeWidth;
      this.firstEdge[node + 1] = edge;
    }
  }

  get count(): number {
    return this.nodes.length / this.width;
  }
  type(node: number): string {
    return this.nodeTypes[this.nodes[node * this.width + this.field.type]!]!;
  }
  id(node: number): number {
    return this.nodes[node * this.width + this.field.id]!;
  }
  size(node: number): number {
    return this.nodes[node * this.width + this.field.size]!;
  }
  /** `object Map`, `closure run`, or the node type alone (`string`, `array`, `code`). */
  label(node: number): string {
    const type = this.type(node);
    return type === 'object' || type === 'closure' ? `${type} ${this.strings[this.nodes[node * this.width + this.field.name]!]!.slice(0, 60)}` : type;
  }
  /** Whether an edge keeps its target alive. */
  strong(edge: number): boolean {
    const type = this.edgeTypes[this.edges[edge + this.edgeField.type]!];
    return type !== 'weak' && type !== 'shortcut';
  }
  target(edge: number): number {
    return this.edges[edge + this.edgeField.to]! / this.width;
  }
  /** The edge's property name; indexes (of an array, a hash table) as `[]`, so that the entries of one table group together. */
  edgeName(edge: number): string {
    const type = this.edgeTypes[this.edges[edge + this.edgeField.type]!];
    if (type === 'element' || type === 'hidden') return '[]';
    const name = String(this.strings[this.edges[edge + this.edgeField.name]!]);
    return /^\d+$/.test(name) ? '[]' : name.slice(0, 40);
  }
}

/** Self sizes and counts by constructor (or node type) in a heap snapshot. */
export function byConstructor(path: string): Map<string, HeapTotal> {
  const snapshot = new Snapshot(path);
  const totals = new Map<string, HeapTotal>();
  for (let node = 0; node < snapshot.count; node += 1) add(totals, snapshot.label(node), snapshot.size(node));
  return totals;
}

/**
 * The objects of `late` that `early` lacks, grouped by the older object that
 * holds them: `object Map .table <- object ThreadHistory.cache <- ...`. Native
 * and engine-internal nodes (compiled code, shapes) are left out: their ids are
 * not kept from one snapshot to the next, or they are the JIT's.
 */
export function newObjectsByHolder(early: string, late: string): Map<string, HeapTotal> {
  const before = new Snapshot(early);
  const known = new Set<number>();
  for (let node = 0; node < before.count; node += 1) known.add(before.id(node));
  const after = new Snapshot(late);
  const counted = (node: number) => !known.has(after.id(node)) && ['object', 'array', 'string', 'concatenated string', 'sliced string', 'closure', 'number', 'regexp'].includes(after.type(node));
  // From every old object, breadth first over new ones: each new object goes to the first old holder that reaches it.
  const holder = new Int32Array(after.count).fill(-1);
  const queue: number[] = [];
  const reach = (edge: number, via: number) => {
    const to = after.target(edge);
    if (holder[to]! < 0 && counted(to) && after.strong(edge)) {
      holder[to] = via;
      queue.push(to);
    }
  };
  for (let node = 0; node < after.count; node += 1) {
    if (counted(node) || after.type(node) === 'synthetic') continue;
    for (let edge = after.firstEdge[node]!; edge < after.firstEdge[node + 1]!; edge += after.edgeWidth) reach(edge, edge);
  }
  for (let i = 0; i < queue.length; i += 1) {
    const node = queue[i]!;
    for (let edge = after.firstEdge[node]!; edge < after.firstEdge[node + 1]!; edge += after.edgeWidth) reach(edge, holder[node]!);
  }
  const retainers = retainersOf(after);
  const owner = ownerOfEdge(after);
  const totals = new Map<string, HeapTotal>();
  for (let node = 0; node < after.count; node += 1) {
    if (!counted(node)) continue;
    const edge = holder[node]!;
    const key = edge < 0 ? '(held by nothing strong)' : `${after.label(owner(edge))} .${after.edgeName(edge)} <- ${pathTo(after, retainers, owner(edge), 5)}`;
    add(totals, key, after.size(node));
  }
  return totals;
}

function add(totals: Map<string, HeapTotal>, key: string, bytes: number): void {
  const entry = totals.get(key) ?? { bytes: 0, count: 0 };
  entry.bytes += bytes;
  entry.count += 1;
  totals.set(key, entry);
}

/** Per node, the strong edges that reach it, as [from node, edge] pairs. */
function retainersOf(snapshot: Snapshot): [number, number][][] {
  const retainers: [number, number][][] = Array.from({ length: snapshot.count }, () => []);
  for (let node = 0; node < snapshot.count; node += 1) {
    for (let edge = snapshot.firstEdge[node]!; edge < snapshot.firstEdge[node + 1]!; edge += snapshot.edgeWidth) {
      if (snapshot.strong(edge)) retainers[snapshot.target(edge)]!.push([node, edge]);
    }
  }
  return retainers;
}

/** The node an edge leaves from (a binary search over the nodes' first edges). */
function ownerOfEdge(snapshot: Snapshot): (edge: number) => number {
  return (edge) => {
    let low = 0;
    let high = snapshot.count - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (snapshot.firstEdge[middle]! <= edge) low = middle;
      else high = middle - 1;
    }
    return low;
  };
}

/** A chain of `depth` retainers up from `node`: `object ThreadHistory.cache <- object Object.history`. */
function pathTo(snapshot: Snapshot, retainers: [number, number][][], node: number, depth: number): string {
  const parts: string[] = [];
  const seen = new Set([node]);
  for (let current = node, step = 0; step < depth; step += 1) {
    const next = retainers[current]!.find(([from]) => !seen.has(from) && snapshot.type(from) !== 'synthetic');
    if (!next) break;
    parts.push(`${snapshot.label(next[0])}.${snapshot.edgeName(next[1])}`);
    current = next[0];
    seen.add(current);
  }
  return parts.join(' <- ');
}
