//! Building the roll, stacking (EA "Building the roll" 2, "by stack key as in the sheet"): the
//! roll's effects and the parts' carried instances grouped by key and reduced by its policy.

use super::Counted;

/// A stack key as grouped: `source` groups each source apart.
pub(super) fn group_key(written: &str, source_id: &str) -> String {
    if written == "source" {
        format!("source={source_id}")
    } else {
        written.to_owned()
    }
}

/// A member of a roll's stacking group: its key as written, its source ID, instance order and the
/// value it compares by.
pub(super) struct Member<'k, V> {
    pub key: Option<&'k str>,
    pub source: &'k str,
    pub order: usize,
    pub value: V,
}

/// A counted roll effect as a stacking member, comparing by `value`.
pub(super) fn member<'k>(c: &'k Counted<'_>, value: i128) -> Member<'k, i128> {
    Member {
        key: c.effect.stack_key.as_deref(),
        source: c.source.id.as_deref().unwrap_or_default(),
        order: c.order,
        value,
    }
}

/// Which `members` count, stacked by key and policy as the sheet stacks (EA "Building the roll" 2,
/// "by stack key as in the sheet"), each group in instance order.
pub(super) fn stacked<V: PartialOrd>(
    settings: &ocf_model::Settings,
    members: &[Member<'_, V>],
) -> Vec<bool> {
    let mut by_order: Vec<usize> = (0..members.len()).collect();
    by_order.sort_by_key(|&m| members[m].order);
    let counts = ocf_engine::effects::stack_counts(
        settings,
        by_order
            .iter()
            .map(|&m| (members[m].key, members[m].source)),
        |a, b| {
            members[by_order[a]]
                .value
                .partial_cmp(&members[by_order[b]].value)
                .unwrap_or(std::cmp::Ordering::Equal)
        },
    );
    let mut out = vec![true; members.len()];
    for (n, &m) in by_order.iter().enumerate() {
        out[m] = counts[n];
    }
    out
}
