//! Zipfian ranks scattered over an address space.
//!
//! Model: rank `k` (1 = most popular) is drawn with probability proportional to `1 / k^theta`
//! by rejection-inversion (`rand_distr::Zipf`: O(1) per sample, no table), then mapped to a
//! slot by a fixed affine permutation `slot = (a * (k - 1) + b) mod n` with `gcd(a, n) = 1`,
//! so hot slots are spread over the space instead of packed at its start (a bijection: each
//! rank has its own slot). `theta = 0` is uniform.

use rand::Rng;
use rand_distr::Distribution;

#[derive(Clone, Debug)]
pub struct ZipfSlots {
    n: u64,
    dist: rand_distr::Zipf<f64>,
    a: u64,
    b: u64,
}

impl ZipfSlots {
    /// `n >= 1` slots, exponent `theta >= 0`.
    pub fn new(n: u64, theta: f64) -> ZipfSlots {
        assert!(n >= 1 && theta >= 0.0, "zipf over {n} slots, theta {theta}");
        let dist = rand_distr::Zipf::new(n, theta).expect("n >= 1 and theta >= 0 are valid");
        // An odd multiplier near n / golden ratio, nudged until it is coprime with n.
        let mut a = ((n as f64 * 0.618_033_988_749_895) as u64) | 1;
        while gcd(a, n) != 1 {
            a += 2;
        }
        ZipfSlots {
            n,
            dist,
            a: a % n.max(1),
            b: n / 3,
        }
    }

    /// The slot of rank `k` (1-based).
    pub fn slot_of_rank(&self, k: u64) -> u64 {
        ((self.a as u128 * (k - 1) as u128 + self.b as u128) % self.n as u128) as u64
    }

    pub fn sample<R: Rng>(&self, rng: &mut R) -> u64 {
        let k = self.dist.sample(rng) as u64;
        self.slot_of_rank(k.clamp(1, self.n))
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn the_permutation_is_a_bijection() {
        for n in [1u64, 2, 10, 97, 1000, 4096] {
            let z = ZipfSlots::new(n, 0.99);
            let mut seen = vec![false; n as usize];
            for k in 1..=n {
                let s = z.slot_of_rank(k) as usize;
                assert!(!seen[s], "n {n}: slot {s} twice");
                seen[s] = true;
            }
        }
    }

    #[test]
    fn popularity_follows_the_power_law() {
        let n = 1000;
        let z = ZipfSlots::new(n, 1.0);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut hits = vec![0u32; n as usize];
        for _ in 0..200_000 {
            hits[z.sample(&mut rng) as usize] += 1;
        }
        let h = |k: u64| hits[z.slot_of_rank(k) as usize] as f64;
        // P(1) / P(2) = 2 and P(1) / P(10) = 10 for theta = 1 (within sampling noise).
        assert!((h(1) / h(2) - 2.0).abs() < 0.15, "{}", h(1) / h(2));
        assert!((h(1) / h(10) - 10.0).abs() < 1.5, "{}", h(1) / h(10));
    }
}
