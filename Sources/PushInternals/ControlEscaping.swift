/// `text` with control characters (C0, DEL and C1) written as `\u{…}` and `\` doubled: safe to
/// print on a line of its own, since nothing in it can end the line, move the cursor or change the
/// terminal. Text from peers (tokens, reasons, ids, a proxy's status line, a sender's message) goes
/// through this before it reaches a terminal.
package func escapingControls(_ text: some StringProtocol) -> String {
    var result = ""
    for scalar in text.unicodeScalars {
        if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\\" {
            result += scalar == "\\" ? "\\\\" : "\\u{\(String(scalar.value, radix: 16))}"
        } else {
            result.unicodeScalars.append(scalar)
        }
    }
    return result
}
