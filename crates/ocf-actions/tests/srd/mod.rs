//! What the SRD 5.1 tests of the bundled 5E pack share: the repository's root, the pack's ruleset,
//! a published figures file, and the dice functions their whole runs roll with.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::path::PathBuf;

use ocf_dice::{DiceError, DiceFunction, FaceRequest};
use serde_json::Value as Json;

pub const PACK: &str = "5e-srd-5.1";

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The 5E pack's ruleset, loaded alone.
pub fn ruleset() -> ocf_model::Ruleset {
    let release = ocf_load::source::read_pack(&root().join("testdata/packs").join(PACK))
        .expect("the pack reads");
    ocf_load::load_ruleset(&[release], &ocf_load::LoadOptions::default()).expect("the pack loads")
}

/// The published figures of `testdata/published/<file>`.
pub fn published(file: &str) -> Vec<Json> {
    serde_json::from_str(
        &std::fs::read_to_string(root().join("testdata/published").join(file))
            .expect("the published figures"),
    )
    .expect("JSON")
}

/// A d20 shows 10 (neither a natural 1 nor a critical); every other die its lowest face.
pub struct Tens;

impl DiceFunction for Tens {
    fn face(&mut self, request: &FaceRequest) -> Result<i64, DiceError> {
        let (low, _) = request.die.face_range();
        Ok(if request.die.face_count() == 20 {
            10
        } else {
            low
        })
    }
}

/// Faces in order, then each die's lowest.
pub struct Faces(pub VecDeque<i64>);

impl DiceFunction for Faces {
    fn face(&mut self, request: &FaceRequest) -> Result<i64, DiceError> {
        Ok(self
            .0
            .pop_front()
            .unwrap_or_else(|| request.die.face_range().0))
    }
}
