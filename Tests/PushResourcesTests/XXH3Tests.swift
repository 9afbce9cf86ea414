import PushResources
import PushTestSupport
import Testing

/// The xxHash project's sanity buffer: bytes from a 64-bit generator seeded with PRIME32 and
/// multiplied by PRIME64 (`XSUM_fillTestBuffer` in xxHash's `cli/xsum_sanity_check.c`).
let sanityBuffer: [UInt8] = {
    var generator: UInt64 = 2_654_435_761
    return (0..<(4096 + 64 + 1)).map { _ in
        defer { generator &*= 11_400_714_785_074_694_797 }
        return UInt8(truncatingIfNeeded: generator >> 56)
    }
}()

private let prime32: UInt64 = 2_654_435_761
private let prime64: UInt64 = 11_400_714_785_074_694_797

/// `XSUM_XXH3_testdata` from xxHash's `cli/xsum_sanity_check.c` (v0.8.x): length, seed, XXH3-64.
private let xxh3Vectors: [(length: Int, seed: UInt64, digest: UInt64)] = [
    (0, 0, 0x2D06_8005_38D3_94C2), (0, prime64, 0xA8A6_B918_B2F0_364A),
    (1, 0, 0xC44B_DFF4_074E_ECDB), (1, prime64, 0x032B_E332_DD76_6EF8),
    (6, 0, 0x27B5_6A84_CD2D_7325), (6, prime64, 0x8458_9C11_6AB5_9AB9),
    (12, 0, 0xA713_DAF0_DFBB_77E7), (12, prime64, 0xE730_3E1B_2336_DE0E),
    (24, 0, 0xA3FE_70BF_9D35_10EB), (24, prime64, 0x850E_80FC_35BD_D690),
    (48, 0, 0x397D_A259_ECBA_1F11), (48, prime64, 0xADC2_CBAA_44AC_C616),
    (80, 0, 0xBCDE_FBBB_2C47_C90A), (80, prime64, 0xC6DD_0CB6_9953_2E73),
    (195, 0, 0xCD94_217E_E362_EC3A), (195, prime64, 0xBA68_003D_370C_B3D9),
    (403, 0, 0xCDEB_804D_65C6_DEA4), (403, prime64, 0x6259_F6EC_FD64_43FD),
    (512, 0, 0x617E_4959_9013_CB6B), (512, prime64, 0x3CE4_57DE_14C2_7708),
    (2048, 0, 0xDD59_E2C3_A5F0_38E0), (2048, prime64, 0x66F8_1670_669A_BABC),
    (2240, 0, 0x6E73_A905_39CF_2948), (2240, prime64, 0x757B_A848_7D1B_5247),
    (2367, 0, 0xCB37_AEB9_E5D3_61ED), (2367, prime64, 0xD2DB_3415_B942_B42A),
]

/// `XSUM_XXH128_testdata` from the same file: length, seed, (low64, high64) as the file lists them.
private let xxh128Vectors: [(length: Int, seed: UInt64, low: UInt64, high: UInt64)] = [
    (0, 0, 0x6001_C324_468D_497F, 0x99AA_06D3_0147_98D8),
    (0, prime32, 0x5444_F786_9C67_1AB0, 0x9222_0AE5_5E14_AB50),
    (1, 0, 0xC44B_DFF4_074E_ECDB, 0xA6CD_5E93_9200_0F6A),
    (1, prime32, 0xB53D_5557_E7F7_6F8D, 0x89B9_9554_BA22_467C),
    (6, 0, 0x3E70_39BD_DA43_CFC6, 0x082A_FE0B_8162_D12A),
    (6, prime32, 0x269D_8F70_BE98_856E, 0x5A86_5B53_89AB_D2B1),
    (12, 0, 0x061A_1927_13F6_9AD9, 0x6E3E_FD8F_C780_2B18),
    (12, prime32, 0x9BE9_F9A6_7F3C_7DFB, 0xD7E0_9D51_8A34_05D3),
    (24, 0, 0x1E70_44D2_8B1B_901D, 0x0CE9_66E4_678D_3761),
    (24, prime32, 0xD730_4C54_EBAD_40A9, 0x3162_0267_14A6_A243),
    (48, 0, 0xF942_219A_ED80_F67B, 0xA002_AC4E_5478_227E),
    (48, prime32, 0x7BA3_C3E4_53A1_934E, 0x163A_DDE3_6C07_2295),
    (81, 0, 0x5E8B_AFB9_F95F_B803, 0x4952_F581_81AB_0042),
    (81, prime32, 0x703F_BB3D_7A5F_755C, 0x2724_EC7A_DC75_0FB6),
    (222, 0, 0xF1AE_BD59_7CEC_6B3A, 0x337E_0964_1B94_8717),
    (222, prime32, 0xAE99_5BB8_AF91_7A8D, 0x9182_0016_621E_97F1),
    (403, 0, 0xCDEB_804D_65C6_DEA4, 0x1B6D_E21E_332D_D73D),
    (403, prime64, 0x6259_F6EC_FD64_43FD, 0xBED3_1197_1E0B_E8F2),
    (512, 0, 0x617E_4959_9013_CB6B, 0x18D2_D110_DCC9_BCA1),
    (512, prime64, 0x3CE4_57DE_14C2_7708, 0x925D_06B8_EC5B_8040),
    (2048, 0, 0xDD59_E2C3_A5F0_38E0, 0xF736_557F_D470_73A5),
    (2048, prime32, 0x230D_43F3_0206_260B, 0x7FB0_3F7E_7186_C3EA),
    (2240, 0, 0x6E73_A905_39CF_2948, 0xCCB1_34FB_FA7C_E49D),
    (2240, prime32, 0xED38_5111_126F_BA6F, 0x50A1_FE17_B338_995F),
    (2367, 0, 0xCB37_AEB9_E5D3_61ED, 0xE89C_0F6F_F369_B427),
    (2367, prime32, 0x6F53_60AE_69C2_F406, 0xD23A_AE4B_76C3_1ECB),
]

@Suite("XXH3 digests")
struct XXH3Tests {
    @Test("XXH3-64 equals xxHash's sanity vectors, one-shot, whole and byte by byte", arguments: xxh3Vectors.indices)
    func xxh3Vectors64(index: Int) {
        let vector = xxh3Vectors[index]
        let input = Array(sanityBuffer[..<vector.length])
        #expect(XXH3.hash64(input, seed: vector.seed) == vector.digest)
        var hasher = XXH3Hasher64(seed: vector.seed)
        hasher.update(input)
        #expect(hasher.digest() == vector.digest)
        hasher.reset()
        for byte in input { hasher.update(CollectionOfOne(byte)) }
        #expect(hasher.digest() == vector.digest)
    }

    @Test("XXH3-128 equals xxHash's sanity vectors, one-shot, whole and byte by byte", arguments: xxh128Vectors.indices)
    func xxh3Vectors128(index: Int) {
        let vector = xxh128Vectors[index]
        let input = Array(sanityBuffer[..<vector.length])
        let expected = XXH128Digest(high: vector.high, low: vector.low)
        #expect(XXH3.hash128(input, seed: vector.seed) == expected)
        var hasher = XXH3Hasher128(seed: vector.seed)
        hasher.update(input)
        #expect(hasher.digest() == expected)
        hasher.reset()
        for byte in input { hasher.update(CollectionOfOne(byte)) }
        #expect(hasher.digest() == expected)
    }

    @Test("Canonical hex is big-endian, as xxhsum -H3 and xxh128sum print it")
    func canonicalHex() {
        // `printf '' | xxhsum -H3` → 2d06800538d394c2; `printf '' | xxh128sum` → 99aa06d3014798d86001c324468d497f
        #expect(XXH3.canonicalHex(XXH3.hash64([UInt8]())) == "2d06800538d394c2")
        #expect(XXH3.hash128([UInt8]()).hexString == "99aa06d3014798d86001c324468d497f")
        // `printf 'abc' | xxhsum -H3` → 78af5f94892f3950; `printf 'abc' | xxh128sum` → 06b05ab6733a618578af5f94892f3950
        #expect(XXH3.canonicalHex(XXH3.hash64(Array("abc".utf8))) == "78af5f94892f3950")
        #expect(XXH3.hash128(Array("abc".utf8)).hexString == "06b05ab6733a618578af5f94892f3950")
        #expect(XXH3.canonicalHex(0x0102_0304_0506_0A0F) == "0102030405060a0f")
        #expect(XXH3.canonicalHex(0xA) == "000000000000000a")
    }

    @Test("Streaming over every split point and piece size equals one-shot")
    func streamingEqualsOneShot() {
        var random = SeededGenerator(seed: 0x5EED_0003)
        let input = (0..<3000).map { _ in UInt8.random(in: 0...255, using: &random) }
        let whole64 = XXH3.hash64(input)
        let whole128 = XXH3.hash128(input)
        for pieceSize in [1, 2, 3, 7, 63, 64, 65, 255, 256, 257, 1023, 1024, 2999, 3000, 4096] {
            var hasher64 = XXH3Hasher64()
            var hasher128 = XXH3Hasher128()
            var offset = 0
            while offset < input.count {
                let piece = input[offset..<min(offset + pieceSize, input.count)]
                hasher64.update(piece)
                hasher128.update(piece)
                offset += piece.count
            }
            #expect(hasher64.digest() == whole64, "piece size \(pieceSize)")
            #expect(hasher128.digest() == whole128, "piece size \(pieceSize)")
        }
    }

    @Test("Non-contiguous collections hash like their bytes")
    func nonContiguous() {
        let input = Array("rich push".utf8)
        #expect(XXH3.hash64(input.reversed().reversed()) == XXH3.hash64(input))
        #expect(XXH3.hash128(input.lazy.map { $0 }) == XXH3.hash128(input))
    }
}
