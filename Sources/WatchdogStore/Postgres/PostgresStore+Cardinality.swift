import PostgresClient

extension PostgresStore {
    public func customKinds(app: String, limit: Int) throws -> [String] {
        try pool.withConnection { connection in
            try connection.query(CardinalitySQL.customKinds(placeholders: ["$1", "$2"]), [app, limit]).map { $0.text(0) }
        }
    }

    public func releaseValues(app: String, release: ReleaseID, limit: Int) throws -> ReleaseValues {
        try pool.withConnection { connection in
            try CardinalitySQL.values(CardinalitySQL.releaseDimensions.map { dimension in
                try connection.query(CardinalitySQL.releaseValues(dimension, placeholders: ["$1", "$2", "$3", "$4"]),
                                     [app, release.version, release.build, limit]).map { $0.text(0) }
            })
        }
    }
}
