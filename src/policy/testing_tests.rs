//! Positions a diagnostic's message gives, moved into the case file.

use super::*;

#[test]
fn a_position_in_a_message_is_moved_to_the_case_files_lines() {
    // The block starts at the case's line 4, indented 6.
    let e = Embedded {
        line: 4,
        indent: 6,
        key: "base",
    };
    assert_eq!(
        in_case("the `[` at line 4, column 9 is not closed (x)", &e),
        "the `[` at line 7, column 15 is not closed (x)"
    );
    // Two positions, and text that only looks like one, are handled.
    assert_eq!(
        in_case(
            "from line 1, column 1 to line 2, column 3; a line of text",
            &e
        ),
        "from line 4, column 7 to line 5, column 9; a line of text"
    );
    assert_eq!(in_case("line 12 alone", &e), "line 12 alone");
    assert_eq!(in_case("line , column 3", &e), "line , column 3");
}
