//! A map value's members ([`Map`]): sorted by name in one vector.
//!
//! A formula's maps are small (a view's dozen fields at most, a roll item's eight members) and
//! made by the thousand: a vector sized for its members is one allocation of what they need,
//! where a B-tree allocates a node of eleven whatever the count, and a lookup is a binary search
//! over a few names.

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use crate::value::Value;

/// A map value: members ordered by name, so that equal maps print alike.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Map {
    entries: Vec<(Arc<str>, Value)>,
}

impl Map {
    pub fn new() -> Map {
        Map {
            entries: Vec::new(),
        }
    }

    /// An empty map with room for `n` members.
    pub fn with_capacity(n: usize) -> Map {
        Map {
            entries: Vec::with_capacity(n),
        }
    }

    fn find(&self, key: &str) -> Result<usize, usize> {
        self.entries.binary_search_by(|(k, _)| compare(k, key))
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.find(key).ok().map(|i| &self.entries[i].1)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.find(key).ok().map(|i| &mut self.entries[i].1)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.find(key).is_ok()
    }

    /// A map of `entries` in any order, a name given twice keeping its last value: sorted once
    /// (stable), so that many members given out of order cost `n log n`, not a vector's insert
    /// each ([`Map::insert`] is for a member or a few: members given in order are pushed).
    pub fn from_entries(mut entries: Vec<(Arc<str>, Value)>) -> Map {
        let sorted = entries
            .windows(2)
            .all(|w| compare(&w[0].0, &w[1].0) == Ordering::Less);
        if !sorted {
            entries.sort_by(|a, b| compare(&a.0, &b.0));
            // Of equal names, keep the last given (the stable sort kept their order), in place:
            // `kept` members are before `kept`, the rest after it are let go.
            let mut kept = 0;
            for i in 0..entries.len() {
                if kept > 0 && entries[kept - 1].0 == entries[i].0 {
                    entries.swap(kept - 1, i);
                } else {
                    entries.swap(kept, i);
                    kept += 1;
                }
            }
            entries.truncate(kept);
        }
        Map { entries }
    }

    /// Inserts a member, giving back the value it replaces. Members given in order (the common
    /// case: a map made from sorted names) are pushed at the end.
    pub fn insert(&mut self, key: Arc<str>, value: Value) -> Option<Value> {
        if self
            .entries
            .last()
            .is_none_or(|(last, _)| compare(last, &key) == Ordering::Less)
        {
            self.entries.push((key, value));
            return None;
        }
        match self.find(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i].1, value)),
            Err(i) => {
                self.entries.insert(i, (key, value));
                None
            }
        }
    }

    /// The member named `name`, inserted first (named `make_key()`, valued `make()`) when there
    /// is none: one search either way.
    pub fn get_or_insert_with(
        &mut self,
        name: &str,
        make_key: impl FnOnce() -> Arc<str>,
        make: impl FnOnce() -> Value,
    ) -> &mut Value {
        let i = match self.find(name) {
            Ok(i) => i,
            Err(i) => {
                self.entries.insert(i, (make_key(), make()));
                i
            }
        };
        &mut self.entries[i].1
    }

    pub fn remove(&mut self, key: &str) -> Option<Value> {
        self.find(key).ok().map(|i| self.entries.remove(i).1)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The members in name order.
    pub fn iter(&self) -> Iter<'_> {
        Iter(self.entries.iter())
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &Arc<str>> + ExactSizeIterator {
        self.entries.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Value> + ExactSizeIterator {
        self.entries.iter().map(|(_, v)| v)
    }
}

/// Names in `str` order, told apart by their first bytes where they differ there (most of a
/// map's names do) without a call to compare the rest.
#[inline]
fn compare(a: &str, b: &str) -> Ordering {
    match (a.as_bytes().first(), b.as_bytes().first()) {
        (Some(x), Some(y)) if x != y => x.cmp(y),
        _ => a.cmp(b),
    }
}

/// The members of a [`Map`] in name order, as `(name, value)` references.
#[derive(Clone)]
pub struct Iter<'a>(std::slice::Iter<'a, (Arc<str>, Value)>);

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a Arc<str>, &'a Value);

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (k, v))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(|(k, v)| (k, v))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a Map {
    type Item = (&'a Arc<str>, &'a Value);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl IntoIterator for Map {
    type Item = (Arc<str>, Value);
    type IntoIter = std::vec::IntoIter<(Arc<str>, Value)>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl FromIterator<(Arc<str>, Value)> for Map {
    /// A name given twice keeps its last value, as inserting one by one would
    /// ([`Map::from_entries`]).
    fn from_iter<I: IntoIterator<Item = (Arc<str>, Value)>>(iter: I) -> Map {
        Map::from_entries(iter.into_iter().collect())
    }
}

impl Extend<(Arc<str>, Value)> for Map {
    /// The members added, a name given again keeping its last value ([`Map::from_entries`]).
    fn extend<I: IntoIterator<Item = (Arc<str>, Value)>>(&mut self, iter: I) {
        let mut entries = std::mem::take(&mut self.entries);
        entries.extend(iter);
        *self = Map::from_entries(entries);
    }
}

impl fmt::Debug for Map {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(s: &str) -> Arc<str> {
        Arc::from(s)
    }

    #[test]
    fn members_stay_in_name_order_and_a_name_given_twice_keeps_its_last_value() {
        let mut m = Map::new();
        assert_eq!(m.insert(k("b"), Value::Int(2)), None);
        assert_eq!(m.insert(k("a"), Value::Int(1)), None);
        assert_eq!(m.insert(k("c"), Value::Int(3)), None);
        assert_eq!(m.insert(k("b"), Value::Int(4)), Some(Value::Int(2)));
        let names: Vec<&str> = m.keys().map(|k| &**k).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(m.get("b"), Some(&Value::Int(4)));
        assert_eq!(m.remove("a"), Some(Value::Int(1)));
        assert!(!m.contains_key("a"));
        assert_eq!(m.len(), 2);
        let collected: Map = [
            (k("z"), Value::Int(1)),
            (k("y"), Value::Int(2)),
            (k("z"), Value::Int(3)),
        ]
        .into_iter()
        .collect();
        assert_eq!(format!("{collected:?}"), r#"{"y": Int(2), "z": Int(3)}"#);
    }

    #[test]
    fn many_members_out_of_order_are_sorted_once() {
        // Untrusted input may give a map's members in any order: a hundred thousand in reverse
        // make the map in one sort, not an insert each (that would move 5 billion members).
        let n = 100_000;
        let entries: Vec<(Arc<str>, Value)> = (0..n)
            .rev()
            .map(|i| (k(&format!("m{i:06}")), Value::Int(i)))
            .chain([(k("m000007"), Value::Int(-7))])
            .collect();
        let m = Map::from_entries(entries);
        assert_eq!(m.len(), n as usize);
        assert_eq!(m.get("m000007"), Some(&Value::Int(-7)));
        assert_eq!(m.keys().next().map(|k| &**k), Some("m000000"));
        let mut extended = Map::new();
        extended.extend([
            (k("b"), Value::Int(1)),
            (k("a"), Value::Int(2)),
            (k("b"), Value::Int(3)),
        ]);
        assert_eq!(format!("{extended:?}"), r#"{"a": Int(2), "b": Int(3)}"#);
    }

    #[test]
    fn names_compare_as_strings_do() {
        let names = [
            "",
            "a",
            "ab",
            "abc",
            "abd",
            "b",
            "kept",
            "kind",
            "value",
            "values",
            "Z",
            "é",
            "a-very-long-member-name-of-thirty",
            "a-very-long-member-name-of-thirtz",
        ];
        for a in names {
            for b in names {
                assert_eq!(compare(a, b), a.cmp(b), "{a} against {b}");
            }
        }
    }
}
