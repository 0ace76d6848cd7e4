// The engine's way to the one seeded generator, which lives in common/ because the simulator (which
// may not import server/) draws from the same one: same seed, same sequence, everywhere.
export { Prng, seededRandom } from '../../common/prng.ts';
