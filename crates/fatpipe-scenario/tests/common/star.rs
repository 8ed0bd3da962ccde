//! A graph of `n` hosts around one router with one flow, shared by `tests/bad_input.rs` (planning
//! must stay linear in the hosts) and `benches/planning.rs` (how long it takes).

pub fn star(n: usize) -> String {
    let mut s = String::from(
        "duration = \"1s\"\n[topology]\nkind = \"graph\"\nnodes = [{ name = \"r\", kind = \"router\" }",
    );
    for i in 0..n {
        s.push_str(&format!(", {{ name = \"h{i}\" }}"));
    }
    s.push_str("]\nlinks = [");
    for i in 0..n {
        s.push_str(&format!(
            "{}{{ between = [\"h{i}\", \"r\"], rate = \"1Gbps\", delay = \"1ms\" }}",
            if i > 0 { ", " } else { "" }
        ));
    }
    s.push_str("]\n[[flows]]\nsrc = \"h0\"\ndst = \"h1\"\n");
    s
}
