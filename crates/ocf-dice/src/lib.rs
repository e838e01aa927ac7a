//! Dice: dice values, rolling them into the spec's roll items with faces from a dice function, and
//! their exact probability distributions.

pub mod bounds;
pub mod distribution;
pub mod error;
pub mod faces;
pub mod item;
pub mod limits;
pub mod rng;
pub mod roll;
mod rules;
pub mod value;

pub use bounds::bounds;
pub use distribution::{Distribution, distribution};
pub use error::{DiceError, DistributionLimit};
pub use faces::{DiceFunction, FaceReason, FaceRequest, FixedFaces, OsDice, SeededDice};
pub use item::{Face, ItemKind, ItemModifier, Roll, RollItem, Sides};
pub use limits::DiceLimits;
pub use roll::{roll, roll_term};
pub use value::{Compare, CompareOp, DiceTerm, DiceValue, Die, Modifier};
