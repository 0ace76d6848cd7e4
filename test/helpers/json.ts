// The type of a JSON answer a test reads without declaring its shape. The conformance tests check
// GitLab's wire format field by field with expect(), and typing every answer would be a second,
// hand-written copy of the contract; where the answer is one of our own views, tests use the
// contract's type instead.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the one named escape hatch for untyped answers in tests
export type LooseJson = any;
