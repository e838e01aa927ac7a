//! The nearest known key to a misspelt one, for "did you mean" hints.

/// The candidate closest to `word` by edit distance (a swap of neighbours counts as one edit), if it is
/// close enough to be a likely typo: at most a third of the word's length, and at least one edit allowed.
pub fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|candidate| {
            (
                edit_distance(&word.to_lowercase(), &candidate.to_lowercase()),
                candidate,
            )
        })
        .filter(|&(distance, _)| distance <= limit)
        .min_by_key(|&(distance, _)| distance)
        .map(|(_, candidate)| candidate)
}

/// Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Three rows suffice: the swap looks two rows back.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        current[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (previous[j] + 1)
                .min(current[j - 1] + 1)
                .min(previous[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(before[j - 2] + 1);
            }
            current[j] = best;
        }
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        let cases = [
            ("effects", "effects", 0),
            ("efects", "effects", 1),
            ("effcets", "effects", 1),
            ("stackkey", "stackKey", 1),
            ("", "op", 2),
            ("when", "then", 1),
        ];
        for (a, b, expected) in cases {
            assert_eq!(edit_distance(a, b), expected, "{a} -> {b}");
        }
    }

    #[test]
    fn nearest_keys() {
        let keys = ["id", "target", "op", "value", "when", "stackKey", "effects"];
        assert_eq!(nearest("efects", keys), Some("effects"));
        assert_eq!(nearest("stackkey", keys), Some("stackKey"));
        assert_eq!(nearest("targte", keys), Some("target"));
        assert_eq!(nearest("colour", keys), None);
        // Short words allow one edit, no more.
        assert_eq!(nearest("ob", keys), Some("op"));
        assert_eq!(nearest("xy", keys), None);
    }
}
