//! The safety limits on a formula's text (DA, Safety limits: `maxFormulaLength`,
//! `maxFormulaDepth`; "The values are PROVISIONAL").

/// How long and how deep a formula may be. Reaching either is `safety-limit-exceeded`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Limits {
    /// `maxFormulaLength`: the most bytes a formula's text may have.
    pub max_formula_length: usize,
    /// `maxFormulaDepth`: the most levels of expression nodes the formula's tree may have.
    pub max_formula_depth: usize,
}

impl Limits {
    /// 4096 bytes: the longest formula of the spec's corpus is about 130 bytes, and a pack formula
    /// of a page of text is still allowed.
    pub const DEFAULT_MAX_FORMULA_LENGTH: usize = 4096;
    /// 64 levels: the deepest corpus formula is 9 levels; 64 leaves room for long `&&` chains
    /// (each link adds a level) while keeping recursive walks of the tree shallow.
    pub const DEFAULT_MAX_FORMULA_DEPTH: usize = 64;
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_formula_length: Self::DEFAULT_MAX_FORMULA_LENGTH,
            max_formula_depth: Self::DEFAULT_MAX_FORMULA_DEPTH,
        }
    }
}
