// The model of the bulk-import benches (bench/import.ts, bench/import-decode.ts): users, nested
// groups, a folder tree and documents, as the generated tuple files need it.

export const DSL = `model
  schema 1.1
type user
type group
  relations
    define member: [user, group#member]
type folder
  relations
    define parent: [folder]
    define viewer: [user, group#member] or viewer from parent
type document
  relations
    define parent: [folder]
    define owner: [user]
    define editor: [user, group#member] or owner
    define viewer: [user, group#member] or editor or viewer from parent
`;
