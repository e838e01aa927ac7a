//! Families, `viewFields` sets and field hints: what a rules document declares for expansion and
//! display rather than for the sheet itself.
//!
//! A **family** is a named set of declared values, each with its own fields (EC, loadRuleset step 1:
//! "Families"). A pack declares its own families by bare name and adds values to another pack's
//! family under the family's qualified name. A key written with a `{family}` placeholder is expanded
//! into one key per value (formats.md §2.7).

use std::ops::Deref;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::shape::{self, Never, Shape};
use crate::{Id, Keyed, Literal, ViewFieldDecl};

/// A family's values, by value ID, in written order; each value's fields by name (`fieldOf` reads
/// them). A value with no fields is `{}`.
pub type FamilyDecl = Keyed<FamilyValue>;

/// One family value's fields: literals, read as written in the pack that declared the value.
pub type FamilyValue = Keyed<Literal>;

/// A named set of view fields (`viewFields`), which a role's or a link slot's `fields` may name.
pub type ViewFieldSet = Keyed<ViewFieldDecl>;

/// A role's or a link slot's `fields`: written out, or the name of a `viewFields` set, which loading
/// expands into the set's fields (EC: "`fields` that name a `viewFields` set").
///
/// It reads as the map of fields (`Deref`); a set not expanded yet has none.
#[derive(Debug, Clone, PartialEq, Default, JsonSchema)]
#[schemars(with = "ViewFieldsSchema")]
pub struct ViewFields {
    /// The `viewFields` set named, until expansion replaces it with its fields.
    pub set: Option<Id>,
    pub fields: Keyed<ViewFieldDecl>,
}

impl ViewFields {
    /// Neither a set nor any field: nothing to write.
    pub fn is_empty(&self) -> bool {
        self.set.is_none() && self.fields.is_empty()
    }
}

impl Deref for ViewFields {
    type Target = Keyed<ViewFieldDecl>;

    fn deref(&self) -> &Keyed<ViewFieldDecl> {
        &self.fields
    }
}

impl From<Keyed<ViewFieldDecl>> for ViewFields {
    fn from(fields: Keyed<ViewFieldDecl>) -> ViewFields {
        ViewFields { set: None, fields }
    }
}

impl Serialize for ViewFields {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.set {
            Some(set) => set.serialize(serializer),
            None => self.fields.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for ViewFields {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match shape::deserialize::<D, Id, Keyed<ViewFieldDecl>, Never>(
            deserializer,
            "a map of view fields or the name of a `viewFields` set",
        )? {
            Shape::Scalar(set) => Ok(ViewFields {
                set: Some(set),
                fields: Keyed::default(),
            }),
            Shape::Map(fields) => Ok(fields.into()),
            Shape::List(never) => match never {},
        }
    }
}

/// The schema of [`ViewFields`]: the two shapes it reads.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum ViewFieldsSchema {
    Set(Id),
    Fields(Keyed<ViewFieldDecl>),
}

/// A field hint (display-hints.md, lost): where and how a sheet shows a field. A later pack's hint
/// with the same `id` replaces an earlier one (EC, step 2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FieldHint {
    pub id: String,
    /// The field the hint is about; qualified by loading.
    pub field: Id,
    /// The display group the field is shown in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Its place in the group, lowest first; written order when equal or unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<i64>,
}
