//! Names as the data writes them: IDs (local `abilities.str.score` or qualified `5e-srd-5.1:combat.ac`),
//! tags and versions. They are kept as written; qualifying and resolving them is the loader's job.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

macro_rules! text_newtype {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
        #[serde(transparent)]
        pub struct $name(pub String);

        impl $name {
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<&str> for $name {
            fn from(text: &str) -> Self {
                Self(text.to_owned())
            }
        }
    };
}

text_newtype! {
    /// A reference by ID: local (`classes.fighter`), resolved in the pack and its dependencies, or
    /// qualified (`5e-srd-5.1:classes.fighter`). Compound forms (`<item>#<id>`) are kept as written too.
    Id
}

text_newtype! {
    /// A dotted, hierarchical tag (`damage.fire`); declaring one declares the tags above it.
    Tag
}

text_newtype! {
    /// A pack release's version, `MAJOR.MINOR.PATCH` (semantic versioning).
    Version
}

text_newtype! {
    /// A version range a dependency accepts (`^1.2.0`, `>=1.0.0 <2.0.0`), in the npm range syntax.
    VersionRange
}

impl Id {
    /// The pack part of a qualified ID (`5e-srd-5.1` in `5e-srd-5.1:combat.ac`), if any.
    pub fn pack(&self) -> Option<&str> {
        self.0.split_once(':').map(|(pack, _)| pack)
    }
}
