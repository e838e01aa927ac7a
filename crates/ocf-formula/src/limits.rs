//! Safety limits on parsing, lowering and evaluation (catalogue §7.1: "Packs are untrusted, so
//! every implementation enforces the safety limits"). Reaching one is `safety-limit-exceeded`.

/// The values are PROVISIONAL in the spec; these defaults are ours (decisions.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// `maxFormulaLength` and `maxFormulaDepth`, enforced by the parser. Lowering checks the depth
    /// again, and evaluation and checking recurse only along the lowered tree, so their recursion
    /// is bounded by `max_formula_depth` too.
    pub syntax: ocf_syntax::Limits,
    /// The longest string, in bytes, a formula may produce by concatenation or `string()`.
    pub max_string_len: usize,
    /// The longest list a formula may build (a list literal, `map`, `filter`).
    pub max_list_len: usize,
    /// The largest dice count in a dice literal or `(expr)dS` (like `maxDicePerItem`).
    pub max_dice_count: u32,
    /// How many expressions one evaluation may evaluate, counting each element a list function
    /// or copy aggregate visits, so that nested aggregates over large data stay bounded.
    pub max_steps: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            syntax: ocf_syntax::Limits::default(),
            max_string_len: 64 * 1024,
            max_list_len: 10_000,
            max_dice_count: 1_000,
            max_steps: 1_000_000,
        }
    }
}
