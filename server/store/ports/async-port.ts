/** P with each method returning a promise of what it returned (callbacks passed in, such as ensure's make, stay synchronous). */
export type AsyncPort<P> = {
  [K in keyof P]: P[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<R> : P[K];
};
