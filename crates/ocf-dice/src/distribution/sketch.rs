//! What a pool keeps of a multiset of unit values: just enough to sum the kept ranks.
//!
//! Keep and drop sum the ranks `lo..hi` (lowest first) of the sorted values. For the unit counts a
//! term can reach, each bound sits either a fixed rank from the bottom or a fixed distance from the
//! top (`kh3` keeps from `N - 3`, `dl1` from 1). So a [`Core`] holds the whole sorted list while it
//! is short, and past that only its lowest `low` and highest `high` values; when one bound hangs
//! from the bottom and the other from the top, the sum of every contribution is kept beside it.

use rustc_hash::FxHashMap;

use crate::error::DiceError;
use crate::rules::TermRules;

/// The most values a core may keep (its `low + high`).
const MAX_CORE: usize = 64;

/// Where a kept-rank bound sits for all the unit counts `N` a core compresses: a fixed rank from
/// the bottom, or `N - b`, a fixed distance from the top.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Anchor {
    Bottom(usize),
    Top(usize),
}

impl Anchor {
    fn at(self, n: usize) -> Option<usize> {
        match self {
            Anchor::Bottom(a) => Some(a),
            Anchor::Top(b) => n.checked_sub(b),
        }
    }

    fn size(self) -> usize {
        match self {
            Anchor::Bottom(c) | Anchor::Top(c) => c,
        }
    }
}

/// What a core keeps, worked out from the kept ranks for every unit count the term can have.
#[derive(Debug, Clone)]
pub(super) struct Shape {
    /// How many of the lowest and of the highest values a long list keeps.
    low: usize,
    high: usize,
    /// Whether the sum of all contributions is kept (the kept ranks hang from both ends).
    pub total: bool,
    lo: Anchor,
    hi: Anchor,
    /// `kept[n]`: the kept ranks of a short list of `n` values (`n <= low + high`).
    kept: Vec<(usize, usize)>,
}

impl Shape {
    /// The shape for a term whose final unit count lies in `n_min..=n_max`.
    pub fn new(rules: &TermRules, n_min: usize, n_max: usize) -> Result<Shape, DiceError> {
        let (lo, lo_from) = anchor(|n| rules.kept_ranks(n).0, n_min, n_max);
        let (hi, hi_from) = anchor(|n| rules.kept_ranks(n).1, n_min, n_max);
        let (mut low, mut high) = (0, 0);
        for a in [lo, hi] {
            match a {
                Anchor::Bottom(c) => low = low.max(c),
                Anchor::Top(c) => high = high.max(c),
            }
        }
        // Below `from` the anchors may not hold, so lists that short must stay whole.
        let from = lo_from.max(hi_from);
        if from > n_min && low + high + 1 < from {
            high = from - 1 - low;
        }
        if low + high > MAX_CORE {
            return Err(DiceError::DistributionUnsupported {
                reason: "keep or drop ranks more than 64 values from the ends",
            });
        }
        let total = matches!(
            (lo, hi),
            (Anchor::Bottom(_), Anchor::Top(_)) | (Anchor::Top(_), Anchor::Bottom(_))
        );
        Ok(Shape {
            low,
            high,
            total,
            lo,
            hi,
            kept: (0..=low + high).map(|n| rules.kept_ranks(n)).collect(),
        })
    }

    fn capacity(&self) -> usize {
        self.low + self.high
    }
}

/// The anchor that `bound(n)` keeps for the largest unit counts, preferring the one nearer its end,
/// and the least count from which it holds all the way to `n_max`.
fn anchor(bound: impl Fn(usize) -> usize, n_min: usize, n_max: usize) -> (Anchor, usize) {
    let last = bound(n_max);
    let holds_from = |a: Anchor| {
        let mut from = n_max;
        while from > n_min && a.at(from - 1) == Some(bound(from - 1)) {
            from -= 1;
        }
        from
    };
    [Anchor::Bottom(last), Anchor::Top(n_max - last)]
        .into_iter()
        .map(|a| (a, holds_from(a)))
        .min_by_key(|&(a, from)| (a.size(), from))
        .expect("two candidates")
}

/// What a kept unit of value `v` adds to the term: itself, or when counting, its score.
pub(super) fn contribution(rules: &TermRules, v: i64) -> i64 {
    if rules.counts() { rules.score(v) } else { v }
}

/// A multiset of unit values cut down to what the kept ranks need (the total, when the shape keeps
/// it, is kept beside the core, by the pool).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Core {
    /// Whether `values` is the whole sorted list; otherwise there are more than `low + high`
    /// values and `values` holds the lowest `low` then the highest `high`.
    whole: bool,
    values: Vec<i64>,
}

impl Core {
    fn empty() -> Core {
        Core {
            whole: true,
            values: Vec::new(),
        }
    }

    fn unit(value: i64, shape: &Shape) -> Core {
        Core::empty().merge(
            &Core {
                whole: true,
                values: vec![value],
            },
            shape,
        )
    }

    /// `self` and `other` together. The lowest `low` of a union are among the lowest `low` each
    /// side kept, and likewise the highest, so a cut-down side loses nothing the union needs.
    fn merge(&self, other: &Core, shape: &Shape) -> Core {
        let mut values = Vec::with_capacity(self.values.len() + other.values.len());
        let (mut a, mut b) = (
            self.values.iter().peekable(),
            other.values.iter().peekable(),
        );
        loop {
            let next = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) if x <= y => a.next(),
                (_, Some(_)) => b.next(),
                (Some(_), None) => a.next(),
                (None, None) => break,
            };
            values.extend(next);
        }
        let whole = self.whole && other.whole && values.len() <= shape.capacity();
        if !whole {
            // A cut-down side has exactly `low + high` values, so the union has at least that.
            values.drain(shape.low..values.len() - shape.high);
        }
        Core { whole, values }
    }

    /// The sum of the contributions of the kept ranks, `total` being the sum of all of them (used
    /// only when the shape keeps it).
    fn kept_sum(&self, total: i128, shape: &Shape, rules: &TermRules) -> Result<i64, DiceError> {
        let sum = |values: &[i64]| {
            values
                .iter()
                .try_fold(0i64, |s, &v| s.checked_add(contribution(rules, v)))
                .ok_or(DiceError::Overflow)
        };
        if self.whole {
            let (lo, hi) = shape.kept[self.values.len()];
            return sum(&self.values[lo..hi]);
        }
        // The contributions of the ranks below a bound, in i128 as the total is: `total` less the
        // top may pass i64 where the kept sum does not (`kh1` of faces at `i64::MIN`).
        let wide = |values: &[i64]| {
            values
                .iter()
                .map(|&v| i128::from(contribution(rules, v)))
                .sum::<i128>()
        };
        let below = |a: Anchor| match a {
            Anchor::Bottom(c) => wide(&self.values[..c]),
            Anchor::Top(c) => total - wide(&self.values[self.values.len() - c..]),
        };
        i64::try_from(below(shape.hi) - below(shape.lo)).map_err(|_| DiceError::Overflow)
    }
}

/// A core's number in its term's [`Cores`].
pub(super) type CoreId = u32;

/// Every core one term met, numbered, with the merges already worked out: the same few cores meet
/// again and again (each round of explosions merges the same chains with the same faces), so a
/// merge is mostly one lookup.
#[derive(Debug)]
pub(super) struct Cores {
    shape: Shape,
    list: Vec<Core>,
    ids: FxHashMap<Core, CoreId>,
    merged: FxHashMap<(CoreId, CoreId), CoreId>,
    /// The most cores this term may meet ([`MAX_CORES`]).
    limit: usize,
}

/// The most distinct cores one term may meet.
pub(super) const MAX_CORES: usize = 100_000;

impl Cores {
    pub fn new(shape: Shape) -> Cores {
        let mut cores = Cores {
            shape,
            list: Vec::new(),
            ids: FxHashMap::default(),
            merged: FxHashMap::default(),
            limit: MAX_CORES,
        };
        cores.intern(Core::empty()).expect("room for one core");
        cores
    }

    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// The core of no units.
    pub const EMPTY: CoreId = 0;

    fn intern(&mut self, core: Core) -> Result<CoreId, DiceError> {
        if let Some(&id) = self.ids.get(&core) {
            return Ok(id);
        }
        if self.list.len() >= self.limit {
            return Err(DiceError::DistributionTooLarge {
                limit: crate::error::DistributionLimit::States,
            });
        }
        let id = self.list.len() as CoreId;
        self.list.push(core.clone());
        self.ids.insert(core, id);
        Ok(id)
    }

    pub fn unit(&mut self, value: i64) -> Result<CoreId, DiceError> {
        let core = Core::unit(value, &self.shape);
        self.intern(core)
    }

    pub fn merge(&mut self, a: CoreId, b: CoreId) -> Result<CoreId, DiceError> {
        let key = (a.min(b), a.max(b));
        if let Some(&id) = self.merged.get(&key) {
            return Ok(id);
        }
        let core = self.list[a as usize].merge(&self.list[b as usize], &self.shape);
        let id = self.intern(core)?;
        self.merged.insert(key, id);
        Ok(id)
    }

    pub fn kept_sum(&self, id: CoreId, total: i128, rules: &TermRules) -> Result<i64, DiceError> {
        self.list[id as usize].kept_sum(total, &self.shape, rules)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::{DiceTerm, Die, Modifier};

    fn shape(modifiers: Vec<Modifier>, n_min: usize, n_max: usize) -> Shape {
        let rules = TermRules::new(&DiceTerm::new(n_min as u32, Die::Sides(6), modifiers));
        Shape::new(&rules, n_min, n_max).unwrap()
    }

    #[test]
    fn shapes_keep_what_the_ranks_need() {
        let cases = [
            (vec![Modifier::KeepHighest(3)], 4, 404),
            (vec![Modifier::DropLowest(1)], 3, 303),
            (
                vec![Modifier::DropLowest(1), Modifier::DropHighest(1)],
                4,
                404,
            ),
            (
                vec![Modifier::KeepHighest(3), Modifier::KeepLowest(1)],
                2,
                20,
            ),
            (vec![Modifier::KeepLowest(2)], 4, 4),
            (vec![], 4, 4),
        ];
        let shown: Vec<String> = cases
            .into_iter()
            .map(|(m, lo, hi)| {
                let s = shape(m, lo, hi);
                format!(
                    "low {} high {} total {} ranks {:?}..{:?}",
                    s.low, s.high, s.total, s.lo, s.hi
                )
            })
            .collect();
        expect_test::expect![[r#"
            [
                "low 0 high 3 total false ranks Top(3)..Top(0)",
                "low 1 high 0 total true ranks Bottom(1)..Top(0)",
                "low 1 high 1 total true ranks Bottom(1)..Top(1)",
                "low 0 high 3 total false ranks Top(3)..Top(2)",
                "low 2 high 0 total false ranks Bottom(0)..Bottom(2)",
                "low 0 high 0 total true ranks Bottom(0)..Top(0)",
            ]
        "#]]
        .assert_debug_eq(&shown);
    }

    #[test]
    fn cores_keep_the_ends_of_the_union() {
        let s = shape(
            vec![Modifier::DropLowest(1), Modifier::DropHighest(1)],
            4,
            404,
        );
        let a = [5, 1, 3]
            .iter()
            .fold(Core::empty(), |c, &v| c.merge(&Core::unit(v, &s), &s));
        let b = [2, 6]
            .iter()
            .fold(Core::empty(), |c, &v| c.merge(&Core::unit(v, &s), &s));
        let ab = a.merge(&b, &s);
        assert_eq!((ab.whole, ab.values.clone()), (false, vec![1, 6]));
        let rules = TermRules::new(&DiceTerm::new(
            4,
            Die::Sides(6),
            vec![Modifier::DropLowest(1), Modifier::DropHighest(1)],
        ));
        // 1 2 3 5 6 without its lowest and highest: 2 + 3 + 5.
        assert_eq!(ab.kept_sum(17, &s, &rules), Ok(10));
    }

    #[test]
    fn too_many_cores_are_refused() {
        let mut cores = Cores::new(shape(vec![Modifier::KeepHighest(2)], 2, 20));
        // The empty core and three units, then room for one merge.
        cores.limit = 5;
        let units: Vec<CoreId> = (1..=3).map(|v| cores.unit(v).unwrap()).collect();
        assert_eq!(cores.merge(units[0], units[1]), Ok(4));
        let err = cores.merge(units[0], units[2]).unwrap_err();
        expect_test::expect!["the pool of dice needs more than 100 000 states"]
            .assert_eq(&err.to_string());
    }
}
