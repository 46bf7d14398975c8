import GRDB

extension SQLiteStore {
    public func customKinds(app: String, limit: Int) throws -> [String] {
        try pool.read { db in
            try String.fetchAll(db.cachedStatement(sql: CardinalitySQL.customKinds(placeholders: ["?", "?"])), arguments: [app, limit])
        }
    }

    public func releaseValues(app: String, release: ReleaseID, limit: Int) throws -> ReleaseValues {
        try pool.read { db in
            try CardinalitySQL.values(CardinalitySQL.releaseDimensions.map { dimension in
                try String.fetchAll(db.cachedStatement(sql: CardinalitySQL.releaseValues(dimension, placeholders: ["?", "?", "?", "?"])),
                                    arguments: [app, release.version, release.build, limit])
            })
        }
    }
}
