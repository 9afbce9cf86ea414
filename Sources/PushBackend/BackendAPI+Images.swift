import Crypto
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore
import PushCore
import PushInternals
import Synchronization

#if canImport(FoundationEssentials)
import class FoundationEssentials.JSONEncoder
#else
import class Foundation.JSONEncoder
#endif

/// What users may upload for rich notifications.
public struct ImageLimits: Sendable, Hashable {
    /// One image's bytes: 10 MB, what iOS takes as an image attachment.
    public var maximumBytes: Int
    /// Images one user may hold (uploads in progress count).
    public var maximumImagesPerUser: Int
    /// Bytes of images one user may hold.
    public var maximumBytesPerUser: Int
    /// How long an image no notification names is kept after its upload, for the sender to use it.
    public var unreferencedGrace: Duration
    /// Bytes of uploaded images each instance keeps in memory, most recently served first.
    public var cacheBytes: Int

    public init(
        maximumBytes: Int = 10_000_000, maximumImagesPerUser: Int = 100, maximumBytesPerUser: Int = 100_000_000,
        unreferencedGrace: Duration = .seconds(24 * 3600), cacheBytes: Int = 64 << 20
    ) {
        self.maximumBytes = maximumBytes
        self.maximumImagesPerUser = maximumImagesPerUser
        self.maximumBytesPerUser = maximumBytesPerUser
        self.unreferencedGrace = unreferencedGrace
        self.cacheBytes = cacheBytes
    }
}

extension BackendAPI {
    /// The upload types: what a notification service extension can attach, and what the bytes must be.
    static let uploadTypes: [ContentType] = [.png, .jpeg, .gif]
    /// Bytes of an upload held before they are written to the store as one chunk.
    static let uploadChunkBytes = 256 << 10
    /// An upload that never completed (the process died) is removed after this long.
    static let abandonedUploadAge = Duration.seconds(3600)

    /// `POST /api/images`: the body, streamed to the store in chunks as it arrives (never held whole),
    /// its type read from its first bytes and required to match `Content-Type`, its XXH3 entity tag
    /// and SHA-256 computed on the way. Nothing of an upload that fails is left.
    func uploadImage(_ request: Request, caller: Authenticator.User) async throws -> Response {
        let declaredType = request.headers[.contentType].map { String($0.prefix { $0 != ";" }).trimmingOptionalWhitespace().lowercased() }
        guard let declaredType, let contentType = Self.uploadTypes.first(where: { $0.mediaType == declaredType }) else {
            throw APIError(status: 415, code: .unsupportedMediaType, "send the image as image/png, image/jpeg or image/gif")
        }
        let limits = imageLimits
        let declaredLength = request.headers[.contentLength].flatMap { Int($0) }
        if let declaredLength, declaredLength > limits.maximumBytes {
            throw APIError(status: 413, code: .bodyTooLarge, "the image is over \(limits.maximumBytes) bytes")
        }
        let held = try await store.images(owner: caller.name)
        guard held.count < limits.maximumImagesPerUser else {
            throw APIError(status: 409, code: .tooManyImages, "you hold \(limits.maximumImagesPerUser) images; delete one first")
        }
        let heldBytes = held.reduce(0) { $0 + $1.size }
        guard heldBytes + (declaredLength ?? 0) <= limits.maximumBytesPerUser else {
            throw APIError(status: 409, code: .tooManyImages, "your images would be over \(limits.maximumBytesPerUser) bytes; delete one first")
        }

        let image = ImageRecord(id: randomHex(bytes: 16), owner: caller.name, contentType: contentType.mediaType, createdAt: unixMilliseconds())
        try await store.addImage(image)
        do {
            let (size, entityTag, digest) = try await storeChunks(of: request.body, into: image.id, as: contentType)
            // Checked again now that the size is known (an upload without a length, or uploads at once).
            let others = try await store.images(owner: caller.name).filter { $0.id != image.id && $0.complete }
            guard others.count < limits.maximumImagesPerUser, others.reduce(size, { $0 + $1.size }) <= limits.maximumBytesPerUser else {
                throw APIError(status: 409, code: .tooManyImages, "your images would be over \(limits.maximumBytesPerUser) bytes; delete one first")
            }
            try await store.completeImage(id: image.id, size: size, entityTag: entityTag.headerValue, digest: digest)
            var stored = image
            (stored.size, stored.entityTag, stored.digest, stored.complete) = (size, entityTag.headerValue, digest, true)
            // The answer as the generated list's: one description of an image.
            let body = try JSONEncoder().encode(Self.uploadedImage(stored, createdAt: false))
            return .json(
                201, Array(body), headers: [("Location", "/api/images/\(image.id)"), ("ETag", entityTag.headerValue), ("Repr-Digest", digest)])
        } catch {
            // Not on the request's task: a client that went away cancels it, and the store skips
            // work for a cancelled task.
            let store = store
            await Task { _ = try? await store.deleteImage(id: image.id, owner: nil) }.value
            throw error
        }
    }

    /// Reads the body into chunks of ``uploadChunkBytes`` and stores each as it fills.
    private func storeChunks(
        of body: HummingbirdCore.RequestBody, into id: String, as contentType: ContentType
    ) async throws -> (size: Int, entityTag: EntityTag, digest: String) {
        let maximum = imageLimits.maximumBytes
        var chunk = ByteBufferAllocator().buffer(capacity: Self.uploadChunkBytes)
        var (size, index, checkedType) = (0, 0, false)
        var sha256 = SHA256()
        var xxh3 = XXH3Hasher128()
        func checkType(_ prefix: ByteBuffer) throws(APIError) {
            guard ContentType.sniff(prefix.readableBytesView) == contentType else {
                throw APIError(status: 422, code: .invalidImage, "the bytes are not \(contentType.mediaType)")
            }
            checkedType = true
        }
        for try await part in body {
            size += part.readableBytes
            guard size <= maximum else { throw APIError(status: 413, code: .bodyTooLarge, "the image is over \(maximum) bytes") }
            part.withUnsafeReadableBytes { bytes in
                sha256.update(bufferPointer: bytes)
                xxh3.update(bytes)
            }
            var part = part
            while part.readableBytes > 0 {
                var slice = part.readSlice(length: min(part.readableBytes, Self.uploadChunkBytes - chunk.readableBytes))!
                chunk.writeBuffer(&slice)
                if !checkedType && chunk.readableBytes >= ContentType.sniffLength { try checkType(chunk) }
                if chunk.readableBytes == Self.uploadChunkBytes {
                    try await store.addImageChunk(imageID: id, index: index, bytes: chunk)
                    index += 1
                    chunk = ByteBufferAllocator().buffer(capacity: Self.uploadChunkBytes)
                }
            }
        }
        guard size > 0 else { throw APIError(status: 422, code: .invalidImage, "the body is empty") }
        if !checkedType { try checkType(chunk) }
        if chunk.readableBytes > 0 { try await store.addImageChunk(imageID: id, index: index, bytes: chunk) }
        let digest = "sha-256=:\(Base64.encodedString(sha256.finalize())):"
        return (size, EntityTag(strong: xxh3.digest()), digest)
    }

    /// `GET /api/images`: the caller's uploads, newest first.
    func listImages(_ input: Operations.ListImages.Input) async throws -> Operations.ListImages.Output {
        let images = try await store.images(owner: try RequestScope.caller.name).filter(\.complete)
        return .ok(.init(body: .json(.init(images: images.map { Self.uploadedImage($0, createdAt: true) }))))
    }

    /// An image as the upload's answer and the list describe it.
    static func uploadedImage(_ image: ImageRecord, createdAt: Bool) -> Components.Schemas.UploadedImage {
        .init(
            id: image.id, contentType: .init(rawValue: image.contentType) ?? .imagePng, size: image.size, etag: image.entityTag ?? "",
            digest: image.digest ?? "", createdAt: createdAt ? Int(image.createdAt) : nil)
    }

    /// `DELETE /api/images/{id}`: the caller's upload; notifications that name it answer 410 from now.
    func deleteImage(_ input: Operations.DeleteImage.Input) async throws -> Operations.DeleteImage.Output {
        let key = Self.notificationKey(input.path.id)
        guard try await store.deleteImage(id: key, owner: try RequestScope.caller.name) else { throw APIError.notFound("no such image") }
        uploadedImages.remove(id: key)
        return .noContent(.init())
    }

    /// An uploaded image as it is served, from the cache or read from the store once.
    func uploadedImage(id: String) async throws(StoreError) -> ServedImage? {
        let store = store
        return try await uploadedImages.image(id: id) { () async throws(StoreError) -> ServedImage? in
            guard let (record, bytes) = try await store.imageBytes(id: id), let tag = record.entityTag.flatMap(EntityTag.init),
                let digest = record.digest
            else { return nil }
            return ServedImage(bytes: bytes, entityTag: tag, contentType: ContentType(record.contentType), digest: digest)
        }
    }
}

/// Uploaded images held in memory, up to a number of bytes, the least recently served dropped
/// first; each is read from the store once however many phones ask for it at once, and read again
/// after ``lifetime`` (so that an image deleted through another instance stops being served here).
package final class UploadedImageCache: Sendable {
    private struct Entry {
        let image: BackendAPI.ServedImage
        let loaded: ContinuousClock.Instant
        var lastUse: UInt64
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var bytes = 0
        var uses: UInt64 = 0
        var loading: [String: Task<BackendAPI.ServedImage?, any Error>] = [:]
    }

    static let lifetime = Duration.seconds(300)
    let capacity: Int
    private let state = Mutex(State())

    package init(capacity: Int) { self.capacity = capacity }

    package func image(
        id: String, load: @escaping @Sendable () async throws(StoreError) -> BackendAPI.ServedImage?
    ) async throws(StoreError) -> BackendAPI.ServedImage? {
        let now = ContinuousClock.now
        enum Found {
            case cached(BackendAPI.ServedImage)
            case loading(Task<BackendAPI.ServedImage?, any Error>)
        }
        let found = state.withLock { state -> Found in
            state.uses += 1
            if let entry = state.entries[id], now - entry.loaded < Self.lifetime {
                state.entries[id]!.lastUse = state.uses
                return .cached(entry.image)
            }
            if let running = state.loading[id] { return .loading(running) }
            let task = Task { () async throws -> BackendAPI.ServedImage? in
                do {
                    let image = try await load()
                    self.keep(id: id, image)
                    return image
                } catch {
                    self.keep(id: id, nil)
                    throw error
                }
            }
            state.loading[id] = task
            return .loading(task)
        }
        guard case .loading(let task) = found else {
            if case .cached(let image) = found { return image }
            return nil
        }
        do {
            return try await task.value
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.storage, "\(error)")
        }
    }

    private func keep(id: String, _ image: BackendAPI.ServedImage?) {
        state.withLock { state in
            state.loading[id] = nil
            if let old = state.entries.removeValue(forKey: id) { state.bytes -= old.image.bytes.readableBytes }
            guard let image, image.bytes.readableBytes <= capacity / 4 else { return }
            state.entries[id] = Entry(image: image, loaded: .now, lastUse: state.uses)
            state.bytes += image.bytes.readableBytes
            while state.bytes > capacity, let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse }) {
                state.entries[oldest.key] = nil
                state.bytes -= oldest.value.image.bytes.readableBytes
            }
        }
    }

    func remove(id: String) {
        state.withLock { state in
            if let old = state.entries.removeValue(forKey: id) { state.bytes -= old.image.bytes.readableBytes }
        }
    }
}
