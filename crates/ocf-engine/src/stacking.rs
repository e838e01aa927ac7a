//! Stacking (EF "Stacking"): instances with the same `stackKey` form a group, reduced by the
//! policy `settings.stacking` gives its key. Plain helpers over keys and source IDs, shared by a
//! field's value, applyChanges' incoming changes and ocf-actions' rolls.

/// One stacking group (EF, "Stacking"): the instances sharing a `stackKey`, the key as written and
/// the policy `settings.stacking` gives it (its key's, else the default, else `addAll`).
pub struct StackGroup {
    pub key: String,
    pub policy: ocf_model::StackPolicy,
    /// Indices into the instances given, in their order.
    pub members: Vec<usize>,
}

/// [`stack_groups`] over `(stackKey, source ID)` pairs: what a roll's effects and the field
/// instances its parts carry stack by (EA "Building the roll" 2: "by stack key as in the sheet").
pub fn stack_groups_of<'a>(
    settings: &ocf_model::Settings,
    members: impl Iterator<Item = (Option<&'a str>, &'a str)>,
) -> Vec<StackGroup> {
    let stacking = settings.stacking.as_ref();
    let policy_of = |key: &str| {
        stacking
            .and_then(|s| s.keys.get(key).copied())
            .or_else(|| stacking.and_then(|s| s.default))
            .unwrap_or(ocf_model::StackPolicy::AddAll)
    };
    // (resolved key, group)
    let mut groups: Vec<(String, StackGroup)> = Vec::new();
    for (i, (key, source)) in members.enumerate() {
        let Some(key) = key else {
            continue;
        };
        let resolved = if key == "source" {
            format!("source={source}")
        } else {
            key.to_owned()
        };
        match groups.iter_mut().find(|(r, _)| *r == resolved) {
            Some((_, group)) => group.members.push(i),
            None => groups.push((
                resolved,
                StackGroup {
                    key: key.to_owned(),
                    policy: policy_of(key),
                    members: vec![i],
                },
            )),
        }
    }
    groups.into_iter().map(|(_, group)| group).collect()
}

/// Which of `members` (`(stackKey, source ID)`, in instance order) count once stacked (EF
/// "Stacking"): each group is reduced by its key's policy, `addAll` keeping all, `highestOnly`
/// (and `playerChooses`, whose recommendation is the highest, outside computeSheet) the first of
/// the highest, `lowestOnly` the first of the lowest, `compare(a, b)` ordering members `a` and `b`
/// by value. A member without a key always counts.
pub fn stack_counts<'a>(
    settings: &ocf_model::Settings,
    members: impl Iterator<Item = (Option<&'a str>, &'a str)>,
    compare: impl Fn(usize, usize) -> std::cmp::Ordering,
) -> Vec<bool> {
    let members: Vec<(Option<&str>, &str)> = members.collect();
    let mut counts = vec![true; members.len()];
    for group in stack_groups_of(settings, members.into_iter()) {
        let highest = match group.policy {
            ocf_model::StackPolicy::AddAll => continue,
            ocf_model::StackPolicy::HighestOnly | ocf_model::StackPolicy::PlayerChooses => true,
            ocf_model::StackPolicy::LowestOnly => false,
        };
        let mut best = group.members[0];
        for &m in &group.members[1..] {
            let ord = compare(m, best);
            if (highest && ord.is_gt()) || (!highest && ord.is_lt()) {
                best = m;
            }
        }
        for &m in &group.members {
            counts[m] = m == best;
        }
    }
    counts
}
