//! A field's effect instances (EC "Field values": a field reads its own instances): which fields
//! have any, eight to a mask, and each field's own list, the firewalls between the character's
//! index and a field's value.

use std::sync::Arc;

use super::{CharacterInput, FieldKey, Placed, effect_instances};
use crate::targets::FIELDS_PER_MASK;

/// Which of the 8 targetable fields of the key's chunk (`chunk * 8 ..` among the fields an effect
/// can target) have instances, a bit each (the `i`th field of the chunk, bit `i`): a firewall in
/// front of [`field_effects`]. Most of them have none, and their values read only this, so a cold
/// sheet runs one query for 8 of them rather than one each (a tenth of a cold sheet). It changes
/// only when a field gains its first instance or loses its last, and then re-runs the values of
/// the chunk's 8 fields, each finding its instances as before; a change to the instances of a
/// field that has some reaches that field alone, through [`field_effects`]. A field no effect can
/// target reads no mask.
pub(crate) fn fields_with_instances_query<'db>(
    db: &'db dyn salsa::Database,
    key: MaskKey<'db>,
) -> u8 {
    let character = key.character(db);
    let by_field = &effect_instances(db, character).by_field;
    let targets = crate::formula::targets(character.ruleset(db).ruleset(db));
    let first = key.chunk(db) as usize * FIELDS_PER_MASK;
    (0..FIELDS_PER_MASK)
        .filter(|i| targets.place(first + i).is_some_and(|p| by_field.has(p)))
        .fold(0, |mask, i| mask | 1 << i)
}

/// The key of one [`fields_with_instances`] mask: the character, and which 8 targetable fields.
#[salsa::interned(debug, revisions = usize::MAX)]
pub struct MaskKey<'db> {
    #[returns(copy)]
    pub character: CharacterInput,
    #[returns(copy)]
    pub chunk: u32,
}

/// The instances on one field: a firewall between the whole index and the field's value.
pub(crate) fn field_effects_query<'db>(
    db: &'db dyn salsa::Database,
    key: FieldKey<'db>,
) -> FieldInstances {
    FieldInstances(
        effect_instances(db, key.character(db))
            .by_field
            .get(key.field(db))
            .to_vec(),
    )
}

/// A field's instances, in instance order. Two lists are equal when their instances are, but
/// for where each stands in the whole index (`order`, `activation`): a field's value never reads
/// those (it names an instance by its `field_at`), and they shift for every field when an
/// activation is added in front, as a rules-level pick is (listOptions' trials). Comparing
/// without them lets the lists of the fields a pick doesn't reach backdate, so their values
/// don't re-run.
#[derive(Debug, Clone, Default)]
pub struct FieldInstances(pub Vec<Placed>);

impl std::ops::Deref for FieldInstances {
    type Target = [Placed];
    fn deref(&self) -> &[Placed] {
        &self.0
    }
}

impl PartialEq for FieldInstances {
    fn eq(&self, other: &FieldInstances) -> bool {
        same_in_place(&self.0, &other.0)
    }
}

/// Whether two lists of a field's instances are equal as [`FieldInstances`] compares them: the
/// same instances at the same places, wherever they stand in the whole index.
pub(crate) fn same_in_place(a: &[Placed], b: &[Placed]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(a, b)| {
            a.field_at == b.field_at
                && (Arc::ptr_eq(&a.instance, &b.instance) || *a.instance == *b.instance)
        })
}
