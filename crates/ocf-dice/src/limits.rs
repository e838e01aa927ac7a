//! The dice safety limits (DA, Safety limits: "The values are PROVISIONAL").

/// Bounds on the dice one roll item may roll. Reaching one is `safety-limit-exceeded`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiceLimits {
    /// How many times one die may explode: the die and its extra dice form a chain, and asking for
    /// one more extra die past this many fails. Default 100.
    pub max_explosions: u32,
    /// How many times one die may be rerolled. Default 100.
    pub max_rerolls: u32,
    /// How many dice one item may roll before rerolls and explosions (its `count`). Default 1000.
    pub max_dice_per_item: u32,
}

impl DiceLimits {
    pub const DEFAULT: DiceLimits = DiceLimits {
        max_explosions: 100,
        max_rerolls: 100,
        max_dice_per_item: 1000,
    };
}

impl Default for DiceLimits {
    fn default() -> DiceLimits {
        DiceLimits::DEFAULT
    }
}
