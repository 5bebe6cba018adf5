"""The fsimage: the whole namespace at one txid, as a Parquet file with one row per inode.

File names (in ``<name-dir>/current/``): ``fsimage`` (IMAGE_NAME), its digest sidecar
``fsimage.md5`` (IMAGE_NAME + MD5_SUFFIX) and, during a checkpoint, ``fsimage.ckpt``. The writer
and the reader use exactly the path they are given; choosing temp names, fsync and rename belong
to the caller.

Columns (SCHEMA, in this order; "not null" unless marked nullable)::

    id              int64     inode id, unique in the image
    parent_id       int64     id of the parent directory; 0 for the root
    name            string    local name (one path component); "" for the root
    type            int8      TYPE_DIRECTORY = 1, TYPE_FILE = 2
    permission      int16     POSIX mode bits including sticky (0o1000): 0 .. 0o7777
    owner           string    user name (Parquet dictionary-encoded)
    group           string    group name (dictionary-encoded; quote as `group` in Spark SQL)
    mtime           int64     modification time, ms since the epoch
    atime           int64     access time, ms since the epoch
    replication     int16     files: replication factor; directories: 0
    block_size      int64     files: preferred block size in bytes; directories: 0
    length          int64     files: length in bytes; directories: 0
    blocks          list<struct<block_id int64, num_bytes int64, genstamp int64>>
                              files: blocks in order; directories: empty list. Elements and
                              their fields are not null.
    checksum        binary    nullable: the file's whole-content checksum, null when unknown
    xattrs          map<string, binary>
                              nullable: extended attributes by full name ("user.foo"); null
                              when the inode has none. Stored as the standard Parquet MAP, which
                              Spark reads as MapType(StringType, BinaryType).
    ns_quota        int64     namespace quota; NO_QUOTA (-1) for none
    ss_quota        int64     storage-space quota in bytes; NO_QUOTA (-1) for none
    client_name     string    nullable: non-null means a file under construction whose lease
                              is held by this client
    client_machine  string    nullable: host of that client
    acl             list<string>
                              nullable (version 2): the inode's ACL feature entries as
                              "[default:]type:name:perm" (named and group access entries, then
                              the default ACL); the owner, mask and other entries are the
                              permission bits. Null: no ACL.
    snapshot        string    nullable (version 2): JSON of the inode's snapshot state (a
                              snapshottable directory's snapshots, the diffs that serve them,
                              "kept" for an inode only snapshots keep); its layout is in
                              namenode/image/snapshots.py, the namespace side of the format.

Row order carries no meaning; the namenode writes parents before children, but readers build the
tree from ``parent_id``. Rows of inodes only snapshots keep follow the live ones; a kept
subtree's root has parent_id 0 and ``"kept": true`` in its snapshot cell.

Key/value metadata of the Parquet footer (keys and values are bytes; every integer is ASCII
decimal)::

    nnlite.format          "fsimage" -- identifies the file; anything else is not an image
    nnlite.layout_version  LAYOUT_VERSION
    nnlite.namespace_id    id of the namespace the image belongs to
    nnlite.last_txid       txid of the last op the image contains; replay starts after it
    nnlite.inode_count     number of rows; a reader refuses a file whose row count differs
    nnlite.creation_time   ms since the epoch when the image was written
    nnlite.extra.<name>    optional integers the caller adds (ImageMeta.extra), such as
                           last_inode_id, last_block_id and last_snapshot_id
    nnlite.section.<name>  optional byte strings the caller adds (ImageMeta.sections), in
                           base64 (version 3): "secret_manager", the delegation keys and
                           tokens of a secure namenode (namenode/image/secrets.py)

Version meaning: version 1 is this schema without ``acl`` and ``snapshot``; version 2 adds
them; version 3 (LAYOUT_VERSION) adds the ``nnlite.section.*`` keys (a version-2 reader would
drop them unnoticed). A reader takes every version of READABLE_VERSIONS and gives a
column its file predates as nulls (``layout.ADDED`` says which); any other version is
UnsupportedVersionError. Any change to a column, a type or a key's meaning takes a new version.

Encoding: zstd pages with page CRCs (so damage is caught even without the sidecar), row groups of
ROW_GROUP_SIZE rows (bounded memory for ``iter_batches``), dictionary encoding on the repetitive
string columns only, statistics only on ``id`` and ``parent_id``.
Measured on 2 shared cores, 1,000,000 rows, 25 MB: read_image 0.15-0.25 s plus 0.04 s of MD5;
write_image 0.4 s from a Table, 1.5 s from Python lists (1 s of it is pyarrow converting the
lists; int columns passed as ``array.array`` save 0.5 s). Uncompressed is 136 MB and no faster,
lz4/snappy 52 MB; zstd wins on the size sent over HTTP and fsynced.

Sidecar (``fsimage.md5``): one line, ``"<32 lowercase hex digits> *fsimage\\n"``, as md5sum writes
in binary mode; the MD5 is of the whole image file.

Modules (import each name from the module that defines it):

| module | what |
|---|---|
| ``layout.py`` | constants, the Arrow ``SCHEMA``, ``ImageMeta`` |
| ``write.py`` | ``write_image`` and its ``ImageInfo`` |
| ``read.py`` | ``read_meta``, ``read_image``, ``iter_batches`` and the footer checks |
| ``md5.py`` | the file digest and the ``fsimage.md5`` sidecar |

The writer and the reader share only the layout and the digest.
"""
