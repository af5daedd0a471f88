// The settings of stores placed across nodes (`latch serve --placement`, docs/deployment.md,
// "Stores placed across nodes"): rows of the one settings table (./settings.ts), which checks
// their shape where it spreads them in.

export const PLACEMENT_SETTINGS = [
  {
    name: 'placement',
    group: 'Placement',
    kind: 'boolean',
    default: false,
    help: '--datastore postgres: place stores across the nodes (each store on --replicas of them, the rest forwarded) instead of every node loading every store',
  },
  {
    name: 'replicas',
    group: 'Placement',
    kind: 'integer',
    value: '<k>',
    default: 2,
    min: 1,
    max: 100,
    help: 'Nodes that hold each store (K); every node of the cluster must use the same K',
  },
  {
    name: 'capacity',
    group: 'Placement',
    kind: 'integer',
    value: '<weight>',
    default: 1,
    min: 1,
    max: 1_000_000,
    help: "This node's weight in placement: a node of capacity 2 holds about twice the stores of one of capacity 1",
  },
  {
    name: 'advertise-url',
    group: 'Placement',
    kind: 'string',
    value: '<url>',
    defaultNote: 'http://<host>:<port>',
    help: 'The URL other nodes forward requests to (set it when --host is 0.0.0.0 or behind NAT)',
  },
  {
    name: 'node-id',
    group: 'Placement',
    kind: 'string',
    value: '<id>',
    defaultNote: "the advertise URL's host:port",
    help: "This node's name in the membership (latch cluster status, drain, Latch-Served-By)",
  },
  {
    name: 'placement-lease',
    group: 'Placement',
    kind: 'integer',
    value: '<ms>',
    default: 5000,
    min: 300,
    max: 600_000,
    help: "Membership lease, renewed every third of it: a node whose lease lapses is out and its stores' other owners answer for them",
  },
] as const;
