# Multi-stage build: one image with the three binaries; compose picks the command.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/api ./api \
 && CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/queue ./queue \
 && CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/paysim ./cmd/paysim

FROM gcr.io/distroless/static-debian12:nonroot
WORKDIR /app
COPY --from=build /out/ /app/
COPY etc/ /app/etc/
USER nonroot
ENTRYPOINT ["/app/api"]
