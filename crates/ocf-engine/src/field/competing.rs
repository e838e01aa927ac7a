//! A field's value, `set` and competing options (EF "Fixed order" 2, "Competing options"): the
//! groups of `set` effects and `playerChooses` stacking, each applying its pick or its
//! recommended option.

use super::*;

impl<'db> Work<'_, 'db> {
    /// Competing `set` options (EC, "Set"): one remaining applies; several are reported and the
    /// player's pick, else the recommendation, applies.
    pub(super) fn compete(
        &mut self,
        op: Op,
        stack_key: Option<String>,
        counted: Vec<Counted>,
    ) -> Result<Option<Counted>, FieldError> {
        match counted.len() {
            0 => return Ok(None),
            1 => return Ok(counted.into_iter().next()),
            _ => {}
        }
        let all: Vec<usize> = (0..counted.len()).collect();
        let recommend = self
            .decl
            .decl
            .recommend
            .or(self.settings.competing.as_ref().and_then(|c| c.recommend))
            .unwrap_or(Recommend::Highest);
        let recommended = match recommend {
            Recommend::Highest => extreme(&counted, &all, true)?,
            Recommend::Lowest => extreme(&counted, &all, false)?,
            Recommend::First => 0,
            Recommend::Last => counted.len() - 1,
        };
        let group: Vec<&Counted> = counted.iter().collect();
        let applied = self.record_group(op, stack_key, &group, &all, recommended);
        Ok(counted.into_iter().nth(applied))
    }

    /// Reports a competing group and returns the index (into `members`' numbering) that applies:
    /// the first option, in instance order, the input's `competing` lists, else `recommended`.
    pub(super) fn record_group(
        &mut self,
        op: Op,
        stack_key: Option<String>,
        group: &[&Counted],
        members: &[usize],
        recommended: usize,
    ) -> usize {
        let picks = self.character().competing(self.db);
        let position = members.iter().position(|&m| m == recommended).unwrap_or(0);
        let applied_pos = group
            .iter()
            .position(|c| picks.iter().any(|p| *p == c.instance.option_id))
            .unwrap_or(position);
        self.out.competing.push(CompetingGroup {
            op,
            stack_key,
            options: group
                .iter()
                .map(|c| CompetingOption {
                    id: c.instance.option_id.clone(),
                    value: c.value.clone(),
                    source: c.instance.source.clone(),
                })
                .collect(),
            recommended: group[position].instance.option_id.clone(),
            applied: group[applied_pos].instance.option_id.clone(),
        });
        members[applied_pos]
    }
}
