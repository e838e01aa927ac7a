//! Dice functions: where faces come from. The roller asks for one face at a time and says which die
//! it is for and why, so a caller that pauses (the engine at a checkpoint) can say what it needs and
//! a caller that replays can check what it gives.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::io::Read;

use ocf_syntax::dice::Die;

use crate::error::DiceError;
use crate::rng::Xoshiro256;

/// Why the roller needs a face.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FaceReason {
    /// One of the item's `count` dice.
    Initial,
    /// A die is rerolled (`r`, `ro`).
    Reroll,
    /// A die exploded (`!`, `!!`) and adds another.
    Explosion,
}

impl FaceReason {
    pub fn as_str(self) -> &'static str {
        match self {
            FaceReason::Initial => "initial",
            FaceReason::Reroll => "reroll",
            FaceReason::Explosion => "explosion",
        }
    }
}

/// One face the roller asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FaceRequest {
    pub die: Die,
    pub reason: FaceReason,
    /// The index of the roll item (among all items of the roll, flat ones included).
    pub item: usize,
    /// Which of the item's initial dice the face belongs to (a reroll or explosion of die 2 is 2).
    pub die_index: usize,
}

/// Gives die faces. A face must be on the die (`Die::face_range`), or the roll fails with
/// `invalid-face`; a function that cannot answer returns [`DiceError::NoMoreFaces`].
pub trait DiceFunction {
    fn face(&mut self, request: &FaceRequest) -> Result<i64, DiceError>;
}

impl<F: DiceFunction + ?Sized> DiceFunction for &mut F {
    fn face(&mut self, request: &FaceRequest) -> Result<i64, DiceError> {
        (**self).face(request)
    }
}

/// Faces from a list, in the order they are asked for; running out is `no-more-faces`.
#[derive(Debug, Clone, Default)]
pub struct FixedFaces {
    faces: Vec<i64>,
    next: usize,
}

impl FixedFaces {
    pub fn new(faces: Vec<i64>) -> FixedFaces {
        FixedFaces { faces, next: 0 }
    }

    /// How many faces were used so far.
    pub fn used(&self) -> usize {
        self.next
    }
}

impl DiceFunction for FixedFaces {
    fn face(&mut self, request: &FaceRequest) -> Result<i64, DiceError> {
        let face = *self
            .faces
            .get(self.next)
            .ok_or(DiceError::NoMoreFaces { request: *request })?;
        self.next += 1;
        Ok(face)
    }
}

/// Uniform faces from a seeded generator: the same seed gives the same faces.
#[derive(Debug, Clone)]
pub struct SeededDice {
    rng: Xoshiro256,
}

impl SeededDice {
    pub fn new(seed: u64) -> SeededDice {
        SeededDice {
            rng: Xoshiro256::seed_from_u64(seed),
        }
    }
}

fn uniform_face(rng: &mut Xoshiro256, die: Die) -> i64 {
    let (low, _) = die.face_range();
    // `face_count` is at least 1 (a `d0` does not decode), and the sum stays within i64.
    low + rng.below(u64::from(die.face_count().max(1))) as i64
}

impl DiceFunction for SeededDice {
    fn face(&mut self, request: &FaceRequest) -> Result<i64, DiceError> {
        Ok(uniform_face(&mut self.rng, request.die))
    }
}

/// Faces from the operating system's randomness: the generator is seeded with 8 bytes of
/// `/dev/urandom`, or where that cannot be read, from std's per-process random hasher keys mixed
/// with the time.
#[derive(Debug, Clone)]
pub struct OsDice {
    rng: Xoshiro256,
}

impl OsDice {
    pub fn new() -> OsDice {
        OsDice {
            rng: Xoshiro256::seed_from_u64(os_seed()),
        }
    }
}

impl Default for OsDice {
    fn default() -> OsDice {
        OsDice::new()
    }
}

fn os_seed() -> u64 {
    let mut bytes = [0u8; 8];
    if std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .is_ok()
    {
        return u64::from_le_bytes(bytes);
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    RandomState::new().hash_one(nanos)
}

impl DiceFunction for OsDice {
    fn face(&mut self, request: &FaceRequest) -> Result<i64, DiceError> {
        Ok(uniform_face(&mut self.rng, request.die))
    }
}
